//! The GGUF container: header, metadata key/values, tensor infos, the
//! aligned data section. Borrowed over the file's bytes, so reading the
//! layout allocates only the metadata and the tensor table.
//!
//! ```text
//! "GGUF" u32 version  u64 tensor_count  u64 kv_count
//! kv_count × { string key, u32 type, value }
//! tensor_count × { string name, u32 n_dims, u64 dims[n_dims] (innermost first), u32 type, u64 offset }
//! padding to `general.alignment` (32 when absent), then the tensor data; offsets count from there
//! ```
//! Every count and length is checked against the bytes that remain before
//! anything is allocated for it, so a hostile header cannot ask for memory
//! the file does not back.

use std::collections::BTreeMap;

use super::metadata::{Array, Value, ValueType};
use super::quant::GgmlType;
use crate::bail;
use crate::error::{Error, Result};

pub const MAGIC: &[u8; 4] = b"GGUF";
/// The alignment of tensor data when the file has no `general.alignment`.
pub const DEFAULT_ALIGNMENT: u64 = 32;
/// GGUF allows at most this many dimensions per tensor (ggml's GGML_MAX_DIMS).
pub const MAX_DIMS: usize = 4;

/// One tensor's entry in the table: where its bytes are and how to read them.
#[derive(Debug, Clone, PartialEq)]
pub struct TensorInfo {
    pub name: String,
    /// Dimensions innermost first, as GGUF lists them: a matrix with rows of
    /// `dims[0]` numbers has `dims[1]` rows.
    pub dims: Vec<u64>,
    pub ggml_type: GgmlType,
    /// Byte offset inside the data section.
    pub offset: u64,
    /// Bytes of data, from the type's block size.
    pub n_bytes: u64,
}

impl TensorInfo {
    pub fn n_elements(&self) -> u64 {
        self.dims.iter().product()
    }
}

/// A parsed GGUF file over its bytes.
pub struct GgufFile<'a> {
    pub version: u32,
    pub metadata: BTreeMap<String, Value>,
    pub tensors: Vec<TensorInfo>,
    pub alignment: u64,
    /// Where the data section starts in the file.
    pub data_offset: u64,
    bytes: &'a [u8],
}

impl<'a> GgufFile<'a> {
    /// Reads the layout and checks that every tensor's data lies inside the file.
    pub fn parse(bytes: &'a [u8]) -> Result<Self> {
        let mut c = Cursor { bytes, pos: 0 };
        if bytes.len() < 4 {
            bail!("not a GGUF file: it is {} bytes long, shorter than the 4-byte magic", bytes.len());
        }
        if &bytes[..4] != MAGIC {
            bail!("not a GGUF file: it starts with {:02x?}, not the magic \"GGUF\"", &bytes[..4]);
        }
        c.pos = 4;
        let version = c.u32("the version")?;
        match version {
            2 | 3 => {}
            1 => bail!("GGUF version 1 is not supported (it predates 64-bit counts): convert the file with a current llama.cpp"),
            v => bail!("GGUF version {v} is not supported: this reader knows versions 2 and 3"),
        }
        let tensor_count = c.u64("the tensor count")?;
        let kv_count = c.u64("the metadata count")?;
        // Each entry takes at least this many bytes, so a count larger than
        // the rest of the file allows is refused before any allocation.
        c.check_count(kv_count, 8 + 4 + 1, "metadata entries")?;
        c.check_count(tensor_count, 8 + 4 + 8 + 4 + 8, "tensors")?;

        let mut metadata = BTreeMap::new();
        for i in 0..kv_count {
            let key = c.string(&format!("the key of metadata entry {i}"))?;
            let what = format!("metadata value '{key}'");
            let ty = ValueType::from_id(c.u32(&what)?).map_err(|e| Error::new(format!("{what}: {e}")))?;
            let value = c.value(ty, &what, 0)?;
            if metadata.insert(key.clone(), value).is_some() {
                bail!("the metadata key '{key}' appears twice");
            }
        }

        let alignment = match metadata.get("general.alignment") {
            None => DEFAULT_ALIGNMENT,
            Some(v) => match v.as_u64() {
                Some(a) if a > 0 && a.is_power_of_two() && a <= 1 << 20 => a,
                _ => bail!("general.alignment must be a power of two up to 1 MiB, got {v:?}"),
            },
        };

        let mut tensors = Vec::with_capacity(tensor_count as usize);
        for i in 0..tensor_count {
            let name = c.string(&format!("the name of tensor {i}"))?;
            let what = format!("tensor '{name}'");
            let n_dims = c.u32(&what)? as usize;
            if n_dims == 0 || n_dims > MAX_DIMS {
                bail!("{what} has {n_dims} dimensions; GGUF allows 1 to {MAX_DIMS}");
            }
            let mut dims = Vec::with_capacity(n_dims);
            for _ in 0..n_dims {
                dims.push(c.u64(&what)?);
            }
            let ggml_type = GgmlType::from_id(c.u32(&what)?).map_err(|e| Error::new(format!("{what}: {e}")))?;
            let offset = c.u64(&what)?;
            let n_bytes = ggml_type.bytes_for(&dims).map_err(|e| Error::new(format!("{what}: {e}")))?;
            if offset % alignment != 0 {
                bail!("{what}: its data offset {offset} is not a multiple of the alignment {alignment}");
            }
            tensors.push(TensorInfo { name, dims, ggml_type, offset, n_bytes });
        }

        let data_offset = align_up(c.pos as u64, alignment);
        let data_len = (bytes.len() as u64).saturating_sub(data_offset);
        for t in &tensors {
            let end = t.offset.checked_add(t.n_bytes);
            if end.is_none_or(|end| end > data_len) {
                bail!(
                    "tensor '{}' ({} bytes at offset {}) runs past the end of the file: the data section holds {data_len} bytes (is the file truncated?)",
                    t.name,
                    t.n_bytes,
                    t.offset
                );
            }
        }
        let mut names: Vec<&str> = tensors.iter().map(|t| t.name.as_str()).collect();
        names.sort_unstable();
        if let Some(w) = names.windows(2).find(|w| w[0] == w[1]) {
            bail!("the tensor '{}' appears twice", w[0]);
        }
        Ok(GgufFile { version, metadata, tensors, alignment, data_offset, bytes })
    }

    pub fn tensor(&self, name: &str) -> Option<&TensorInfo> {
        self.tensors.iter().find(|t| t.name == name)
    }

    /// The raw bytes of a tensor (checked to lie in the file by `parse`).
    pub fn tensor_bytes(&self, t: &TensorInfo) -> &'a [u8] {
        let start = self.tensor_start(t);
        &self.bytes[start..start + t.n_bytes as usize]
    }

    /// Where a tensor's bytes start in the file.
    pub fn tensor_start(&self, t: &TensorInfo) -> usize {
        (self.data_offset + t.offset) as usize
    }

    pub fn get(&self, key: &str) -> Option<&Value> {
        self.metadata.get(key)
    }

    /// A required metadata entry, or an error naming the key.
    pub fn require(&self, key: &str) -> Result<&Value> {
        self.get(key).ok_or_else(|| Error::new(format!("the GGUF file has no '{key}' metadata entry")))
    }

    pub fn string(&self, key: &str) -> Result<&str> {
        let v = self.require(key)?;
        v.as_str().ok_or_else(|| Error::new(format!("'{key}' must be a string, got {}", v.type_name())))
    }

    pub fn uint(&self, key: &str) -> Result<u64> {
        let v = self.require(key)?;
        v.as_u64().ok_or_else(|| Error::new(format!("'{key}' must be a non-negative integer, got {v:?}")))
    }

    pub fn float(&self, key: &str) -> Result<f64> {
        let v = self.require(key)?;
        v.as_f64().ok_or_else(|| Error::new(format!("'{key}' must be a number, got {v:?}")))
    }
}

fn align_up(x: u64, a: u64) -> u64 {
    x.div_ceil(a) * a
}

/// Little-endian reads that name what they were reading when the bytes run out.
struct Cursor<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    fn remaining(&self) -> usize {
        self.bytes.len() - self.pos
    }

    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8]> {
        if n > self.remaining() {
            bail!("the file is truncated: {what} needs {n} bytes at offset {} but only {} remain", self.pos, self.remaining());
        }
        let s = &self.bytes[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    fn array<const N: usize>(&mut self, what: &str) -> Result<[u8; N]> {
        Ok(self.take(N, what)?.try_into().expect("take returned N bytes"))
    }

    fn u32(&mut self, what: &str) -> Result<u32> {
        Ok(u32::from_le_bytes(self.array(what)?))
    }

    fn u64(&mut self, what: &str) -> Result<u64> {
        Ok(u64::from_le_bytes(self.array(what)?))
    }

    /// Refuses `count` items of at least `min_size` bytes each when the rest of the file cannot hold them.
    fn check_count(&self, count: u64, min_size: u64, what: &str) -> Result<()> {
        if count.saturating_mul(min_size) > self.remaining() as u64 {
            bail!("the header claims {count} {what}, more than the {} remaining bytes can hold", self.remaining());
        }
        Ok(())
    }

    fn str(&mut self, what: &str) -> Result<&'a str> {
        let len = self.u64(what)?;
        if len > self.remaining() as u64 {
            bail!("{what}: a string of {len} bytes is longer than the {} bytes left in the file", self.remaining());
        }
        let raw = self.take(len as usize, what)?;
        std::str::from_utf8(raw).map_err(|_| Error::new(format!("{what} is not valid UTF-8")))
    }

    fn string(&mut self, what: &str) -> Result<String> {
        self.str(what).map(str::to_string)
    }

    /// An array, packed (`metadata::Array`): its element type and count are
    /// checked against the bytes left before anything is allocated.
    fn array_value(&mut self, what: &str, depth: usize) -> Result<Array> {
        if depth >= 2 {
            bail!("{what}: arrays nested more than two deep are not supported");
        }
        let elem = ValueType::from_id(self.u32(what)?).map_err(|e| Error::new(format!("{what}: {e}")))?;
        let count = self.u64(what)?;
        self.check_count(count, elem.min_size(), &format!("elements in {what}"))?;
        let count = count as usize;
        Ok(match elem.fixed_size() {
            Some(size) => {
                let bytes = self.take(count * size, what)?;
                if elem == ValueType::Bool
                    && let Some(b) = bytes.iter().find(|&&b| b > 1)
                {
                    bail!("{what}: a bool must be 0 or 1, got {b}");
                }
                Array::fixed(elem, bytes.to_vec())
            }
            None if elem == ValueType::String => {
                let mut text = String::new();
                let mut ends = Vec::with_capacity(count);
                for _ in 0..count {
                    text.push_str(self.str(what)?);
                    ends.push(text.len());
                }
                Array::strings(text, ends)
            }
            None => {
                let mut items = Vec::with_capacity(count);
                for _ in 0..count {
                    // Each element is an array's own element type, count and values.
                    items.push(self.array_value(what, depth + 1)?);
                }
                Array::arrays(items)
            }
        })
    }

    fn value(&mut self, ty: ValueType, what: &str, depth: usize) -> Result<Value> {
        Ok(match ty {
            ValueType::U8 => Value::U8(self.array::<1>(what)?[0]),
            ValueType::I8 => Value::I8(self.array::<1>(what)?[0] as i8),
            ValueType::U16 => Value::U16(u16::from_le_bytes(self.array(what)?)),
            ValueType::I16 => Value::I16(i16::from_le_bytes(self.array(what)?)),
            ValueType::U32 => Value::U32(self.u32(what)?),
            ValueType::I32 => Value::I32(i32::from_le_bytes(self.array(what)?)),
            ValueType::F32 => Value::F32(f32::from_le_bytes(self.array(what)?)),
            ValueType::Bool => match self.array::<1>(what)?[0] {
                0 => Value::Bool(false),
                1 => Value::Bool(true),
                b => bail!("{what}: a bool must be 0 or 1, got {b}"),
            },
            ValueType::String => Value::String(self.string(what)?),
            ValueType::U64 => Value::U64(self.u64(what)?),
            ValueType::I64 => Value::I64(i64::from_le_bytes(self.array(what)?)),
            ValueType::F64 => Value::F64(f64::from_le_bytes(self.array(what)?)),
            ValueType::Array => Value::Array(self.array_value(what, depth)?),
        })
    }
}

#[cfg(test)]
mod tests;
