//! What a vocabulary entry is, as llama.cpp records it per token. One token
//! can be several things: a control token named `<unused0>` is also unused.

/// A set of token attributes (llama.cpp's `llama_token_attr` bits, less the
/// ones no GGUF file sets).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TokenAttr(u8);

impl TokenAttr {
    pub const NONE: TokenAttr = TokenAttr(0);
    pub const NORMAL: TokenAttr = TokenAttr(1);
    pub const UNKNOWN: TokenAttr = TokenAttr(2);
    pub const CONTROL: TokenAttr = TokenAttr(4);
    pub const USER_DEFINED: TokenAttr = TokenAttr(8);
    pub const UNUSED: TokenAttr = TokenAttr(16);
    pub const BYTE: TokenAttr = TokenAttr(32);

    /// The attribute of a GGUF `tokenizer.ggml.token_type` value: 1 normal,
    /// 2 unknown, 3 control, 4 user-defined, 5 unused, 6 byte; 0 and
    /// anything else are "undefined", which no rule treats as any kind.
    pub fn from_gguf_type(t: i64) -> TokenAttr {
        match t {
            1 => Self::NORMAL,
            2 => Self::UNKNOWN,
            3 => Self::CONTROL,
            4 => Self::USER_DEFINED,
            5 => Self::UNUSED,
            6 => Self::BYTE,
            _ => Self::NONE,
        }
    }

    /// Whether any of `other`'s attributes is set.
    pub fn any(self, other: TokenAttr) -> bool {
        self.0 & other.0 != 0
    }

    pub fn with(self, other: TokenAttr) -> TokenAttr {
        TokenAttr(self.0 | other.0)
    }

    pub const fn union(self, other: TokenAttr) -> TokenAttr {
        TokenAttr(self.0 | other.0)
    }

    /// Split out of the text before the rest is tokenised (llama.cpp's
    /// special-token cache: control, user-defined and unknown tokens).
    pub fn splits_first(self) -> bool {
        self.any(Self::CONTROL.union(Self::USER_DEFINED).union(Self::UNKNOWN))
    }

    /// Shown by its name, never as text (control and unknown tokens).
    pub fn is_special(self) -> bool {
        self.any(Self::CONTROL.union(Self::UNKNOWN))
    }
}
