//! A hostile `model.json` given to the CLI: file names that leave the
//! model's folder are refused by name, before the file is read.
#![cfg(feature = "cli")]

use std::process::Command;

#[test]
fn the_cli_refuses_a_manifest_whose_files_leave_its_folder() {
    let shipped = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../www/models/bard");
    let root = std::env::temp_dir().join(format!("nexttoken-hostile-{}", std::process::id()));
    let dir = root.join("model");
    std::fs::create_dir_all(&dir).unwrap();
    // A real weights file outside the folder: without the check it would be read and loaded.
    std::fs::copy(shipped.join("model.safetensors"), root.join("outside.safetensors")).unwrap();
    std::fs::copy(shipped.join("tokenizer.json"), dir.join("tokenizer.json")).unwrap();
    let mut manifest: serde_json::Value = serde_json::from_slice(&std::fs::read(shipped.join("model.json")).unwrap()).unwrap();
    manifest["weights"] = "../outside.safetensors".into();
    std::fs::write(dir.join("model.json"), manifest.to_string()).unwrap();

    let out = Command::new(env!("CARGO_BIN_EXE_nexttoken"))
        .args(["generate", "--model", dir.to_str().unwrap(), "--prompt", "ROMEO:", "--max-new", "2"])
        .output()
        .unwrap();
    std::fs::remove_dir_all(&root).ok();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "stderr: {stderr}");
    assert!(
        stderr.contains(r#"error: model manifest: "weights" must be a file name beside model.json, not "../outside.safetensors""#),
        "stderr: {stderr}"
    );
}

#[test]
fn the_cli_refuses_a_manifest_asking_for_a_2_to_the_40_wide_model_by_field() {
    let shipped = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../www/models/bard");
    let dir = std::env::temp_dir().join(format!("nexttoken-huge-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for f in ["model.safetensors", "tokenizer.json"] {
        std::fs::copy(shipped.join(f), dir.join(f)).unwrap();
    }
    let mut manifest: serde_json::Value = serde_json::from_slice(&std::fs::read(shipped.join("model.json")).unwrap()).unwrap();
    manifest["config"]["d_model"] = (1u64 << 40).into();
    std::fs::write(dir.join("model.json"), manifest.to_string()).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_nexttoken"))
        .args(["generate", "--model", dir.to_str().unwrap(), "--prompt", "ROMEO:", "--max-new", "2"])
        .output()
        .unwrap();
    std::fs::remove_dir_all(&dir).ok();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "stderr: {stderr}");
    assert!(stderr.starts_with("error: model config: d_model is 1099511627776, more than this build accepts (65536)"), "stderr: {stderr}");
    assert!(stderr.len() < 300, "one readable line: {stderr}");
}
