//! GGUF metadata values: the thirteen value types and typed accessors.
//!
//! An array is kept packed, as its elements' bytes or as one string buffer
//! with offsets, not as one `Value` per element: a vocabulary's three
//! per-token arrays (Gemma 3: 262,144 pieces, scores and types) took 26 MiB
//! as separate values, at the moment of the load when the file itself is
//! already in memory, and a wasm memory keeps its peak.

use crate::bail;
use crate::error::Result;

/// A value's type tag, as GGUF numbers them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueType {
    U8,
    I8,
    U16,
    I16,
    U32,
    I32,
    F32,
    Bool,
    String,
    Array,
    U64,
    I64,
    F64,
}

impl ValueType {
    pub fn from_id(id: u32) -> Result<Self> {
        use ValueType::*;
        Ok(match id {
            0 => U8,
            1 => I8,
            2 => U16,
            3 => I16,
            4 => U32,
            5 => I32,
            6 => F32,
            7 => Bool,
            8 => String,
            9 => Array,
            10 => U64,
            11 => I64,
            12 => F64,
            other => bail!("unknown metadata value type {other} (GGUF defines 0 to 12)"),
        })
    }

    /// The fewest bytes one value of this type takes in the file (a string
    /// its length, an array its element type and count).
    pub fn min_size(self) -> u64 {
        use ValueType::*;
        match self {
            U8 | I8 | Bool => 1,
            U16 | I16 => 2,
            U32 | I32 | F32 => 4,
            U64 | I64 | F64 | String => 8,
            Array => 12,
        }
    }

    /// The type's name in messages.
    pub fn name(self) -> &'static str {
        use ValueType::*;
        match self {
            U8 => "u8",
            I8 => "i8",
            U16 => "u16",
            I16 => "i16",
            U32 => "u32",
            I32 => "i32",
            F32 => "f32",
            Bool => "bool",
            String => "string",
            Array => "array",
            U64 => "u64",
            I64 => "i64",
            F64 => "f64",
        }
    }

    /// The bytes of one value of a fixed-size type; `None` for strings and arrays.
    pub fn fixed_size(self) -> Option<usize> {
        use ValueType::*;
        match self {
            U8 | I8 | Bool => Some(1),
            U16 | I16 => Some(2),
            U32 | I32 | F32 => Some(4),
            U64 | I64 | F64 => Some(8),
            String | Array => None,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    U8(u8),
    I8(i8),
    U16(u16),
    I16(i16),
    U32(u32),
    I32(i32),
    F32(f32),
    Bool(bool),
    String(String),
    Array(Array),
    U64(u64),
    I64(i64),
    F64(f64),
}

impl Value {
    /// Any integer type holding a value ≥ 0.
    pub fn as_u64(&self) -> Option<u64> {
        match *self {
            Value::U8(v) => Some(v as u64),
            Value::U16(v) => Some(v as u64),
            Value::U32(v) => Some(v as u64),
            Value::U64(v) => Some(v),
            Value::I8(v) => u64::try_from(v).ok(),
            Value::I16(v) => u64::try_from(v).ok(),
            Value::I32(v) => u64::try_from(v).ok(),
            Value::I64(v) => u64::try_from(v).ok(),
            _ => None,
        }
    }

    pub fn as_i64(&self) -> Option<i64> {
        match *self {
            Value::I8(v) => Some(v as i64),
            Value::I16(v) => Some(v as i64),
            Value::I32(v) => Some(v as i64),
            Value::I64(v) => Some(v),
            _ => self.as_u64().and_then(|v| i64::try_from(v).ok()),
        }
    }

    /// Any float or integer type.
    pub fn as_f64(&self) -> Option<f64> {
        match *self {
            Value::F32(v) => Some(v as f64),
            Value::F64(v) => Some(v),
            _ => self.as_i64().map(|v| v as f64),
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_bool(&self) -> Option<bool> {
        match *self {
            Value::Bool(b) => Some(b),
            _ => None,
        }
    }

    pub fn as_array(&self) -> Option<&Array> {
        match self {
            Value::Array(items) => Some(items),
            _ => None,
        }
    }

    pub fn type_name(&self) -> &'static str {
        self.value_type().name()
    }

    pub fn value_type(&self) -> ValueType {
        match self {
            Value::U8(_) => ValueType::U8,
            Value::I8(_) => ValueType::I8,
            Value::U16(_) => ValueType::U16,
            Value::I16(_) => ValueType::I16,
            Value::U32(_) => ValueType::U32,
            Value::I32(_) => ValueType::I32,
            Value::F32(_) => ValueType::F32,
            Value::Bool(_) => ValueType::Bool,
            Value::String(_) => ValueType::String,
            Value::Array(_) => ValueType::Array,
            Value::U64(_) => ValueType::U64,
            Value::I64(_) => ValueType::I64,
            Value::F64(_) => ValueType::F64,
        }
    }
}

/// A metadata array: its elements' type and their values, packed.
#[derive(Clone, PartialEq)]
pub struct Array {
    elem: ValueType,
    items: Items,
}

/// Its type and length, not its elements: an error message that shows a
/// value (`{v:?}`) names an array without listing 262,144 pieces.
impl std::fmt::Debug for Array {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "an array of {} {}s", self.len(), self.elem.name())
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Items {
    /// Fixed-size elements (numbers, bools) as the file stores them, little-endian.
    Fixed(Vec<u8>),
    /// Strings end to end; element i is `text[ends[i - 1]..ends[i]]`.
    Strings { text: String, ends: Vec<usize> },
    /// Arrays of arrays (GGUF nests at most this deep here).
    Arrays(Vec<Array>),
}

impl Array {
    /// `bytes`: `count` elements of the fixed-size type `elem`, little-endian.
    pub(super) fn fixed(elem: ValueType, bytes: Vec<u8>) -> Array {
        debug_assert!(elem.fixed_size().is_some_and(|n| bytes.len().is_multiple_of(n)));
        Array { elem, items: Items::Fixed(bytes) }
    }

    /// Strings, given as one text and where each ends.
    pub(super) fn strings(text: String, ends: Vec<usize>) -> Array {
        Array { elem: ValueType::String, items: Items::Strings { text, ends } }
    }

    pub(super) fn arrays(items: Vec<Array>) -> Array {
        Array { elem: ValueType::Array, items: Items::Arrays(items) }
    }

    /// The elements' type.
    pub fn elem(&self) -> ValueType {
        self.elem
    }

    pub fn len(&self) -> usize {
        match &self.items {
            Items::Fixed(bytes) => bytes.len() / self.elem.fixed_size().expect("a fixed-size type"),
            Items::Strings { ends, .. } => ends.len(),
            Items::Arrays(items) => items.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The elements as strings, `None` for an array of another type.
    pub fn strs(&self) -> Option<impl ExactSizeIterator<Item = &str>> {
        let Items::Strings { text, ends } = &self.items else { return None };
        Some((0..ends.len()).map(move |i| &text[if i == 0 { 0 } else { ends[i - 1] }..ends[i]]))
    }

    /// The elements as scalar values (numbers and bools), `None` for an
    /// array of strings or of arrays.
    pub fn scalars(&self) -> Option<impl ExactSizeIterator<Item = Value> + '_> {
        let Items::Fixed(bytes) = &self.items else { return None };
        let size = self.elem.fixed_size()?;
        let elem = self.elem;
        Some(bytes.chunks_exact(size).map(move |b| scalar(elem, b)))
    }
}

/// One fixed-size element from its little-endian bytes (checked by the reader:
/// `b` has the type's size, and a bool is 0 or 1).
fn scalar(elem: ValueType, b: &[u8]) -> Value {
    let eight = || -> [u8; 8] { b.try_into().expect("an 8-byte element") };
    match elem {
        ValueType::U8 => Value::U8(b[0]),
        ValueType::I8 => Value::I8(b[0] as i8),
        ValueType::Bool => Value::Bool(b[0] != 0),
        ValueType::U16 => Value::U16(u16::from_le_bytes([b[0], b[1]])),
        ValueType::I16 => Value::I16(i16::from_le_bytes([b[0], b[1]])),
        ValueType::U32 => Value::U32(u32::from_le_bytes([b[0], b[1], b[2], b[3]])),
        ValueType::I32 => Value::I32(i32::from_le_bytes([b[0], b[1], b[2], b[3]])),
        ValueType::F32 => Value::F32(f32::from_le_bytes([b[0], b[1], b[2], b[3]])),
        ValueType::U64 => Value::U64(u64::from_le_bytes(eight())),
        ValueType::I64 => Value::I64(i64::from_le_bytes(eight())),
        ValueType::F64 => Value::F64(f64::from_le_bytes(eight())),
        ValueType::String | ValueType::Array => unreachable!("not a fixed-size type"),
    }
}
