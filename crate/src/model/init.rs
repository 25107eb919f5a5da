//! Seeded initialisation from the project's own RNG.
//!
//! burn initialises parameters lazily from a global RNG, so the order in
//! which tensors are first touched (and any other model or thread drawing in
//! between) changes the weights. Drawing every value from our `Rng` while
//! visiting the parameters in module order makes a seed mean the same
//! weights natively, in wasm and on every backend.

use burn::module::{Module, ModuleMapper, Param};
use burn::tensor::{Tensor, TensorData};

use super::Transformer;
use crate::rng::Rng;

/// GPT-2's recipe: N(0, 0.02) weights and embeddings, N(0, 0.02/sqrt(2L))
/// for the projections back into the residual stream (attention `wo`, MLP
/// `down`), zero biases, norm scales 1 and shifts 0.
struct SeededInit {
    rng: Rng,
    residual_std: f64,
    path: Vec<String>,
}

impl SeededInit {
    fn std_for(&self) -> Option<f64> {
        let last = self.path.last().map(String::as_str).unwrap_or("");
        let owner = self.path.iter().rev().nth(1).map(String::as_str).unwrap_or("");
        match last {
            "gamma" => None, // norm scale: ones
            "beta" | "bias" => Some(0.0),
            _ if owner == "wo" || owner == "down" => Some(self.residual_std),
            _ => Some(0.02),
        }
    }
}

impl ModuleMapper for SeededInit {
    fn enter_module(&mut self, name: &str, _container_type: &str) {
        self.path.push(name.to_string());
    }

    fn exit_module(&mut self, _name: &str, _container_type: &str) {
        self.path.pop();
    }

    fn map_float<const D: usize>(&mut self, param: Param<Tensor<D>>) -> Param<Tensor<D>> {
        let std = self.std_for();
        let current = param.val();
        let (shape, device) = (current.shape(), current.device());
        let values: Vec<f32> = (0..shape.num_elements())
            .map(|_| match std {
                None => 1.0,
                Some(s) if s == 0.0 => 0.0,
                Some(s) => (self.rng.next_normal() * s) as f32,
            })
            .collect();
        // A fresh trainable parameter (from_data marks it as requiring gradients).
        Param::from_data(TensorData::new(values, shape), &device)
    }
}

/// Replaces every parameter with values drawn from `Rng::new(seed)`.
pub fn init_seeded(model: Transformer, n_layers: usize, seed: u64) -> Transformer {
    let mut init = SeededInit { rng: Rng::new(seed), residual_std: 0.02 / (2.0 * n_layers as f64).sqrt(), path: Vec::new() };
    model.map(&mut init)
}
