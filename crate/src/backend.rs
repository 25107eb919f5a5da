//! Which burn backend runs the model, chosen at run time through the device.
//!
//! burn-flex is the default (3–6× faster decode in wasm than ndarray);
//! burn-ndarray, deprecated upstream, is compiled in only with the crate's
//! `ndarray` feature.

use burn::tensor::Device;
use serde::{Deserialize, Serialize};

use crate::bail;
use crate::error::Result;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BackendKind {
    #[default]
    Flex,
    Ndarray,
}

impl BackendKind {
    pub fn parse(name: &str) -> Result<Self> {
        match name {
            "flex" => Ok(BackendKind::Flex),
            "ndarray" => Ok(BackendKind::Ndarray),
            other => bail!("unknown backend '{other}': expected 'flex' or 'ndarray'"),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            BackendKind::Flex => "flex",
            BackendKind::Ndarray => "ndarray",
        }
    }

    /// The backends this build can run.
    pub fn available() -> Vec<BackendKind> {
        let mut v = vec![BackendKind::Flex];
        if cfg!(feature = "ndarray") {
            v.push(BackendKind::Ndarray);
        }
        v
    }

    pub fn device(self) -> Result<Device> {
        match self {
            BackendKind::Flex => Ok(Device::flex()),
            #[cfg(feature = "ndarray")]
            #[allow(deprecated)]
            BackendKind::Ndarray => Ok(Device::ndarray()),
            #[cfg(not(feature = "ndarray"))]
            BackendKind::Ndarray => {
                bail!("this build has no ndarray backend: rebuild with `--features ndarray`")
            }
        }
    }
}
