//! Chat mode: a user's message wrapped the way an instruction-tuned model
//! was trained to see it, so that what it generates is its answer.
//!
//! ```text
//! ChatML (SmolLM2, Qwen):  <|im_start|>system\n{default system message}<|im_end|>\n   (when the template has one)
//!                          <|im_start|>user\n{message}<|im_end|>\n<|im_start|>assistant\n
//! Gemma:                   <start_of_turn>user\n{message}<end_of_turn>\n<start_of_turn>model\n
//! Phi-3:                   <|user|>\n{message}<|end|>\n<|assistant|>\n
//! Llama 3:                 <|start_header_id|>user<|end_header_id|>\n\n{message}<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n
//! ```
//! The model continues after the last line and ends its answer with the
//! format's end-of-turn token (`<|im_end|>`, `<end_of_turn>`, `<|end|>`,
//! `<|eot_id|>`). A BOS token, where the template starts with one, is the
//! tokenizer's to add ([`crate::tokenizer::Tokenizer::bos_to_add`]).
//! The model's own template is Jinja; this build recognises these formats in
//! it by their markers (as llama.cpp's template detection does), and
//! ChatML's default system message, rather than running Jinja.

pub const IM_START: &str = "<|im_start|>";
pub const IM_END: &str = "<|im_end|>";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChatFormat {
    ChatMl,
    Gemma,
    Phi3,
    Llama3,
}

impl ChatFormat {
    /// The marker tokens that identify the format, all of which the
    /// template must mention and the vocabulary hold as single tokens.
    fn markers(self) -> &'static [&'static str] {
        match self {
            ChatFormat::ChatMl => &[IM_START, IM_END],
            ChatFormat::Gemma => &["<start_of_turn>", "<end_of_turn>"],
            ChatFormat::Phi3 => &["<|user|>", "<|assistant|>", "<|end|>"],
            ChatFormat::Llama3 => &["<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>"],
        }
    }

    /// The token that ends a turn, which the model emits to finish its answer.
    pub fn end_of_turn(self) -> &'static str {
        match self {
            ChatFormat::ChatMl => IM_END,
            ChatFormat::Gemma => "<end_of_turn>",
            ChatFormat::Phi3 => "<|end|>",
            ChatFormat::Llama3 => "<|eot_id|>",
        }
    }

    const ALL: [ChatFormat; 4] = [ChatFormat::ChatMl, ChatFormat::Llama3, ChatFormat::Gemma, ChatFormat::Phi3];
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChatTemplate {
    pub format: ChatFormat,
    /// The system message the template adds when the conversation has none.
    pub default_system: Option<String>,
}

impl ChatTemplate {
    /// The format the template speaks, when the vocabulary has its markers
    /// as tokens (`is_token`: whether a text is one token of it).
    pub fn from_jinja(template: &str, is_token: impl Fn(&str) -> bool) -> Option<Self> {
        let format = ChatFormat::ALL
            .into_iter()
            .find(|f| f.markers().iter().all(|m| template.contains(m) && is_token(m)))?;
        let default_system = if format == ChatFormat::ChatMl { default_system(template) } else { None };
        Some(ChatTemplate { format, default_system })
    }

    /// The prompt for one user message, ready for the assistant's answer.
    pub fn wrap(&self, user: &str) -> String {
        let (before, after) = self.around();
        format!("{before}{user}{after}")
    }

    /// What the template puts before and after the user's message.
    pub fn around(&self) -> (String, String) {
        let system = self.default_system.as_deref();
        match self.format {
            ChatFormat::ChatMl => {
                let mut before = String::new();
                if let Some(system) = system {
                    before.push_str(&format!("{IM_START}system\n{system}{IM_END}\n"));
                }
                before.push_str(&format!("{IM_START}user\n"));
                (before, format!("{IM_END}\n{IM_START}assistant\n"))
            }
            ChatFormat::Gemma => {
                // Gemma has no system turn: a system message opens the user's.
                let system = system.map(|s| format!("{s}\n\n")).unwrap_or_default();
                (format!("<start_of_turn>user\n{system}"), "<end_of_turn>\n<start_of_turn>model\n".into())
            }
            ChatFormat::Phi3 => {
                let system = system.map(|s| format!("<|system|>\n{s}<|end|>\n")).unwrap_or_default();
                (format!("{system}<|user|>\n"), "<|end|>\n<|assistant|>\n".into())
            }
            ChatFormat::Llama3 => {
                let header = |role: &str| format!("<|start_header_id|>{role}<|end_header_id|>\n\n");
                let system = system.map(|s| format!("{}{s}<|eot_id|>", header("system"))).unwrap_or_default();
                (format!("{system}{}", header("user")), format!("<|eot_id|>{}", header("assistant")))
            }
        }
    }

    pub fn name(&self) -> &'static str {
        match self.format {
            ChatFormat::ChatMl => "chatml",
            ChatFormat::Gemma => "gemma",
            ChatFormat::Phi3 => "phi3",
            ChatFormat::Llama3 => "llama3",
        }
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
        let t = ChatTemplate::from_jinja(SMOLLM2, |_| true).unwrap();
        assert_eq!(t.format, ChatFormat::ChatMl);
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

    // The start of Gemma 3's, Phi-3's and Llama 3's templates as their files carry them.
    const GEMMA3: &str = "{{ bos_token }}{%- if messages[0]['role'] == 'system' -%}...{{ '<start_of_turn>' + role + '\n' + (first_user_prefix if loop.first else \"\") }}...{{ '<end_of_turn>\n' }}{%- endfor -%}{%- if add_generation_prompt -%}{{'<start_of_turn>model\n'}}{%- endif -%}";
    const PHI3: &str = "{% for message in messages %}{% if message['role'] == 'system' %}{{'<|system|>\n' + message['content'] + '<|end|>\n'}}{% elif message['role'] == 'user' %}{{'<|user|>\n' + message['content'] + '<|end|>\n'}}{% elif message['role'] == 'assistant' %}{{'<|assistant|>\n' + message['content'] + '<|end|>\n'}}{% endif %}{% endfor %}{% if add_generation_prompt %}{{ '<|assistant|>\n' }}{% else %}{{ eos_token }}{% endif %}";
    const LLAMA3: &str = "{% set loop_messages = messages %}{% for message in loop_messages %}{% set content = '<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n'+ message['content'] | trim + '<|eot_id|>' %}{% if loop.index0 == 0 %}{% set content = bos_token + content %}{% endif %}{{ content }}{% endfor %}{% if add_generation_prompt %}{{ '<|start_header_id|>assistant<|end_header_id|>\n\n' }}{% endif %}";

    #[test]
    fn recognises_each_format_by_its_markers_and_wraps_like_the_template() {
        let all = |_: &str| true;
        let gemma = ChatTemplate::from_jinja(GEMMA3, all).unwrap();
        assert_eq!(gemma.wrap("Hi"), "<start_of_turn>user\nHi<end_of_turn>\n<start_of_turn>model\n");
        let phi3 = ChatTemplate::from_jinja(PHI3, all).unwrap();
        assert_eq!(phi3.wrap("Hi"), "<|user|>\nHi<|end|>\n<|assistant|>\n");
        let llama3 = ChatTemplate::from_jinja(LLAMA3, all).unwrap();
        assert_eq!(
            llama3.wrap("Hi"),
            "<|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n"
        );
        assert_eq!([gemma.name(), phi3.name(), llama3.name()], ["gemma", "phi3", "llama3"]);
    }

    #[test]
    fn markers_must_be_tokens_of_the_vocabulary() {
        assert_eq!(ChatTemplate::from_jinja(GEMMA3, |t| t != "<end_of_turn>"), None);
        assert_eq!(ChatTemplate::from_jinja("plain {{ messages }}", |_| true), None);
    }
}
