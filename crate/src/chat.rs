//! Chat mode: a user's message wrapped the way an instruction-tuned model
//! was trained to see it, so that what it generates is its answer.
//!
//! ChatML (SmolLM2, Qwen, ...):
//! ```text
//! <|im_start|>system\n{default system message}<|im_end|>\n     (when the template has one)
//! <|im_start|>user\n{message}<|im_end|>\n
//! <|im_start|>assistant\n                                       ← the model continues here
//! ```
//! and the answer ends with `<|im_end|>`, the model's end-of-sequence token.
//! The model's own template is Jinja; this build recognises ChatML in it
//! (and its default system message) rather than running Jinja.

pub const IM_START: &str = "<|im_start|>";
pub const IM_END: &str = "<|im_end|>";

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChatTemplate {
    /// The system message the template adds when the conversation has none.
    pub default_system: Option<String>,
}

impl ChatTemplate {
    /// ChatML when the template speaks it and the vocabulary has both
    /// markers as tokens (`is_token`: whether a text is one token of it).
    pub fn from_jinja(template: &str, is_token: impl Fn(&str) -> bool) -> Option<Self> {
        let markers = is_token(IM_START) && is_token(IM_END);
        if !(markers && template.contains(IM_START) && template.contains(IM_END)) {
            return None;
        }
        Some(ChatTemplate { default_system: default_system(template) })
    }

    /// The prompt for one user message, ready for the assistant's answer.
    pub fn wrap(&self, user: &str) -> String {
        let (before, after) = self.around();
        format!("{before}{user}{after}")
    }

    /// What the template puts before and after the user's message.
    pub fn around(&self) -> (String, String) {
        let mut before = String::new();
        if let Some(system) = &self.default_system {
            before.push_str(&format!("{IM_START}system\n{system}{IM_END}\n"));
        }
        before.push_str(&format!("{IM_START}user\n"));
        (before, format!("{IM_END}\n{IM_START}assistant\n"))
    }

    pub fn name(&self) -> &'static str {
        "chatml"
    }
}

/// A literal `<|im_start|>system\n...<|im_end|>` in the template (not built
/// from a message's content) is its default system message.
fn default_system(template: &str) -> Option<String> {
    let open = format!("{IM_START}system\n");
    let start = template.find(&open)? + open.len();
    let len = template[start..].find(IM_END)?;
    let text = &template[start..start + len];
    let literal = !text.is_empty() && !text.contains(['{', '}', '\'', '"', '+']);
    literal.then(|| text.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    // SmolLM2-135M-Instruct's tokenizer.chat_template, as its GGUF file carries it.
    const SMOLLM2: &str = "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}{{ '<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n' }}{% endif %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}";

    #[test]
    fn finds_smollm2_default_system_message() {
        assert_eq!(default_system(SMOLLM2).as_deref(), Some("You are a helpful AI assistant named SmolLM, trained by Hugging Face"));
        let t = ChatTemplate { default_system: default_system(SMOLLM2) };
        assert_eq!(
            t.wrap("Hi"),
            "<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"
        );
    }

    #[test]
    fn a_system_turn_built_from_content_is_not_a_default() {
        let t = "{{'<|im_start|>system\n' + message['content'] + '<|im_end|>'}}";
        assert_eq!(default_system(t), None);
    }
}
