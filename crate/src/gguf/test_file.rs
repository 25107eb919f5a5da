//! Writing small GGUF files from parts, for the tests of the reader and the loader.

use super::reader::MAGIC;

/// Writes a GGUF file from parts, for tests of the reader and loader.
#[derive(Default)]
pub struct Writer {
    pub version: u32,
    kvs: Vec<u8>,
    n_kv: u64,
    infos: Vec<u8>,
    n_tensors: u64,
    data: Vec<u8>,
}

impl Writer {
    pub fn new() -> Self {
        Writer { version: 3, ..Default::default() }
    }
    fn put_str(buf: &mut Vec<u8>, s: &str) {
        buf.extend((s.len() as u64).to_le_bytes());
        buf.extend(s.as_bytes());
    }
    pub fn kv_raw(&mut self, key: &str, ty: u32, value: &[u8]) -> &mut Self {
        Self::put_str(&mut self.kvs, key);
        self.kvs.extend(ty.to_le_bytes());
        self.kvs.extend(value);
        self.n_kv += 1;
        self
    }
    pub fn kv_u32(&mut self, key: &str, v: u32) -> &mut Self {
        self.kv_raw(key, 4, &v.to_le_bytes())
    }
    pub fn kv_f32(&mut self, key: &str, v: f32) -> &mut Self {
        self.kv_raw(key, 6, &v.to_le_bytes())
    }
    pub fn kv_str(&mut self, key: &str, v: &str) -> &mut Self {
        let mut b = Vec::new();
        Self::put_str(&mut b, v);
        self.kv_raw(key, 8, &b)
    }
    pub fn kv_str_array(&mut self, key: &str, items: &[&str]) -> &mut Self {
        let mut b = Vec::new();
        b.extend(8u32.to_le_bytes());
        b.extend((items.len() as u64).to_le_bytes());
        for s in items {
            Self::put_str(&mut b, s);
        }
        self.kv_raw(key, 9, &b)
    }
    /// Appends a tensor; `data` is its raw bytes in `ty`'s layout.
    pub fn tensor(&mut self, name: &str, dims: &[u64], ty: u32, data: &[u8]) -> &mut Self {
        while self.data.len() % 32 != 0 {
            self.data.push(0);
        }
        Self::put_str(&mut self.infos, name);
        self.infos.extend((dims.len() as u32).to_le_bytes());
        for d in dims {
            self.infos.extend(d.to_le_bytes());
        }
        self.infos.extend(ty.to_le_bytes());
        self.infos.extend((self.data.len() as u64).to_le_bytes());
        self.data.extend(data);
        self.n_tensors += 1;
        self
    }
    pub fn f32_tensor(&mut self, name: &str, dims: &[u64], values: &[f32]) -> &mut Self {
        let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        self.tensor(name, dims, 0, &bytes)
    }
    pub fn kv_bool_array(&mut self, key: &str, items: &[bool]) -> &mut Self {
        let mut b = Vec::new();
        b.extend(7u32.to_le_bytes());
        b.extend((items.len() as u64).to_le_bytes());
        b.extend(items.iter().map(|&v| v as u8));
        self.kv_raw(key, 9, &b)
    }
    /// A Q8_0 tensor (type 8) of `values`, rows of a multiple of 32: per
    /// block an f16 scale amax/127 and 32 codes rounded to nearest.
    pub fn q8_0_tensor(&mut self, name: &str, dims: &[u64], values: &[f32]) -> &mut Self {
        let mut bytes = Vec::new();
        for block in values.chunks(32) {
            let amax = block.iter().fold(0f32, |m, x| m.max(x.abs()));
            let d = half::f16::from_f32(amax / 127.0);
            let inv = if d.to_f32() == 0.0 { 0.0 } else { 1.0 / d.to_f32() };
            bytes.extend(d.to_le_bytes());
            bytes.extend(block.iter().map(|x| (x * inv).round().clamp(-127.0, 127.0) as i8 as u8));
        }
        self.tensor(name, dims, 8, &bytes)
    }
    pub fn finish(&self) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend(MAGIC);
        out.extend(self.version.to_le_bytes());
        out.extend(self.n_tensors.to_le_bytes());
        out.extend(self.n_kv.to_le_bytes());
        out.extend(&self.kvs);
        out.extend(&self.infos);
        while out.len() % 32 != 0 {
            out.push(0);
        }
        out.extend(&self.data);
        out
    }
}
