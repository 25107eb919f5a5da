//! The GGUF reader on files written by `test_file::Writer`: what it reads back, and what it refuses before allocating.

use super::*;
use crate::gguf::test_file::Writer;

fn small() -> Vec<u8> {
    let mut w = Writer::new();
    w.kv_str("general.architecture", "llama").kv_u32("llama.block_count", 2).kv_str_array("tokens", &["a", "b"]);
    w.f32_tensor("x", &[4, 2], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]);
    w.f32_tensor("y", &[3], &[9.0, 10.0, 11.0]);
    w.finish()
}

#[test]
fn reads_metadata_and_tensor_table() {
    let bytes = small();
    let f = GgufFile::parse(&bytes).unwrap();
    assert_eq!(f.version, 3);
    assert_eq!(f.string("general.architecture").unwrap(), "llama");
    assert_eq!(f.uint("llama.block_count").unwrap(), 2);
    assert_eq!(f.get("tokens").unwrap().as_array().unwrap().len(), 2);
    let y = f.tensor("y").unwrap();
    assert_eq!((y.dims.clone(), y.n_bytes, y.offset), (vec![3], 12, 32));
    let raw = f.tensor_bytes(y);
    assert_eq!(f32::from_le_bytes(raw[4..8].try_into().unwrap()), 10.0);
    assert_eq!(f.data_offset % 32, 0);
}

/// An array value's bytes: element type, count, then `items` as they are.
fn array_bytes(elem: u32, count: u64, items: &[u8]) -> Vec<u8> {
    [&elem.to_le_bytes()[..], &count.to_le_bytes(), items].concat()
}

#[test]
fn arrays_read_back_element_by_element() {
    let mut w = Writer::new();
    w.kv_str_array("s", &["▁the", "", "<0x0A>", "a"]);
    let f32s: Vec<u8> = [0.5f32, -1.25, f32::NEG_INFINITY].iter().flat_map(|x| x.to_le_bytes()).collect();
    w.kv_raw("f", 9, &array_bytes(6, 3, &f32s));
    let i32s: Vec<u8> = [1i32, -6, 3].iter().flat_map(|x| x.to_le_bytes()).collect();
    w.kv_raw("i", 9, &array_bytes(5, 3, &i32s));
    w.kv_raw("u64", 9, &array_bytes(10, 1, &(u64::MAX - 1).to_le_bytes()));
    w.kv_bool_array("b", &[true, false]);
    // Two arrays of u8: [7, 8] and [] (each element is an array's own type, count and values).
    let nested = [array_bytes(0, 2, &[7, 8]), array_bytes(0, 0, &[])].concat();
    w.kv_raw("n", 9, &array_bytes(9, 2, &nested));
    w.kv_u32("after", 5);
    let bytes = w.finish();
    let f = GgufFile::parse(&bytes).unwrap();
    let arr = |k: &str| f.get(k).unwrap().as_array().unwrap();
    assert_eq!(arr("s").strs().unwrap().collect::<Vec<_>>(), ["▁the", "", "<0x0A>", "a"]);
    assert!(arr("s").scalars().is_none());
    assert_eq!(arr("f").scalars().unwrap().map(|v| v.as_f64().unwrap()).collect::<Vec<_>>(), [0.5, -1.25, f64::NEG_INFINITY]);
    assert!(arr("f").strs().is_none());
    assert_eq!(arr("i").scalars().unwrap().map(|v| v.as_i64().unwrap()).collect::<Vec<_>>(), [1, -6, 3]);
    assert_eq!(arr("u64").scalars().unwrap().map(|v| v.as_u64().unwrap()).collect::<Vec<_>>(), [u64::MAX - 1]);
    assert_eq!(arr("b").scalars().unwrap().map(|v| v.as_bool().unwrap()).collect::<Vec<_>>(), [true, false]);
    assert_eq!((arr("n").len(), arr("n").elem()), (2, ValueType::Array));
    // A message that shows an array names it without listing it.
    assert!(f.uint("f").unwrap_err().message.ends_with("got Array(an array of 3 f32s)"));
    // The cursor ended each array where the next entry starts.
    assert_eq!(f.uint("after").unwrap(), 5);
    // A bool array with a byte other than 0 or 1 is refused like a bool.
    let mut w = Writer::new();
    w.kv_raw("b", 9, &array_bytes(7, 3, &[1, 0, 2]));
    assert!(message(&w.finish()).contains("a bool must be 0 or 1, got 2"));
}

fn message(bytes: &[u8]) -> String {
    match GgufFile::parse(bytes) {
        Ok(_) => panic!("parsed bytes that should be refused"),
        Err(e) => e.message,
    }
}

#[test]
fn refuses_bad_magic_version_and_truncation_by_name() {
    assert!(message(b"").contains("shorter than the 4-byte magic"));
    assert!(message(b"GGML\x03\0\0\0").contains("not the magic"));
    let mut v1 = small();
    v1[4] = 1;
    assert!(message(&v1).contains("version 1 is not supported"));
    v1[4] = 9;
    assert!(message(&v1).contains("version 9"));
    let full = small();
    // Cut inside the header, inside the tensor table, and inside the data.
    assert!(message(&full[..10]).contains("truncated"));
    assert!(message(&full[..full.len() - 40]).contains("truncated") || message(&full[..full.len() - 40]).contains("runs past the end"));
    assert!(message(&full[..full.len() - 4]).contains("runs past the end of the file"));
}

#[test]
fn huge_counts_are_refused_before_allocating() {
    let mut bytes = small();
    // tensor_count at bytes 8..16: 2^60 tensors.
    bytes[8..16].copy_from_slice(&(1u64 << 60).to_le_bytes());
    assert!(message(&bytes).contains("claims 1152921504606846976 tensors"));
    let mut bytes = small();
    bytes[16..24].copy_from_slice(&u64::MAX.to_le_bytes());
    assert!(message(&bytes).contains("metadata entries"));
    // A string array claiming 2^62 elements.
    let mut w = Writer::new();
    let mut b = Vec::new();
    b.extend(8u32.to_le_bytes());
    b.extend((1u64 << 62).to_le_bytes());
    w.kv_raw("tokens", 9, &b);
    assert!(message(&w.finish()).contains("elements in metadata value 'tokens'"));
    // A string claiming 2^40 bytes.
    let mut w = Writer::new();
    w.kv_raw("k", 8, &(1u64 << 40).to_le_bytes());
    assert!(message(&w.finish()).contains("longer than the"));
}

#[test]
fn refuses_unknown_types_and_odd_shapes() {
    let mut w = Writer::new();
    w.tensor("t", &[32], 99, &[0; 32]);
    assert!(message(&w.finish()).contains("unknown tensor type 99"));
    let mut w = Writer::new();
    w.kv_raw("k", 77, &[0]);
    assert!(message(&w.finish()).contains("unknown metadata value type 77"));
    let mut w = Writer::new();
    // Q8_0 rows must be whole 32-value blocks.
    w.tensor("t", &[33, 1], 8, &[0; 68]);
    assert!(message(&w.finish()).contains("multiple of its block size 32"));
    let mut w = Writer::new();
    w.tensor("t", &[1 << 40, 1 << 40], 0, &[]);
    assert!(message(&w.finish()).contains("too large"));
    let mut w = Writer::new();
    w.f32_tensor("t", &[1], &[1.0]).f32_tensor("t", &[1], &[1.0]);
    assert!(message(&w.finish()).contains("appears twice"));
    let mut w = Writer::new();
    w.kv_u32("general.alignment", 24);
    assert!(message(&w.finish()).contains("general.alignment must be a power of two"));
    let mut w = Writer::new();
    w.kv_raw("k", 8, &[2, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xfe]);
    assert!(message(&w.finish()).contains("is not valid UTF-8"));
    let mut w = Writer::new();
    w.kv_raw("k", 7, &[2]);
    assert!(message(&w.finish()).contains("a bool must be 0 or 1"));
}
