//! Small declarative helpers shared by the message modules. They generate only the boring
//! parts (value sets, empty bodies); every field layout stays hand-written.

/// An enumerated wire value (§3.9): named values plus `Other` for anything a peer sends that
/// the specification does not define, so a decoder keeps what it was given.
macro_rules! wire_enum {
    (
        $(#[$meta:meta])*
        pub enum $name:ident : $repr:ty {
            $( $(#[$vmeta:meta])* $variant:ident = $value:literal => $label:literal, )*
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name {
            $( $(#[$vmeta])* $variant, )*
            /// A value the specification does not define, kept as received.
            Other($repr),
        }

        impl $name {
            /// From the wire value; undefined values are kept in `Other`.
            pub const fn from_raw(v: $repr) -> Self {
                match v {
                    $( $value => Self::$variant, )*
                    other => Self::Other(other),
                }
            }

            /// The wire value.
            pub const fn raw(self) -> $repr {
                match self {
                    $( Self::$variant => $value, )*
                    Self::Other(v) => v,
                }
            }

            /// The specification's name for the value, if it has one.
            pub const fn label(self) -> Option<&'static str> {
                match self {
                    $( Self::$variant => Some($label), )*
                    Self::Other(_) => None,
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                match self.label() {
                    Some(l) => f.write_str(l),
                    None => write!(f, "{}", self.raw()),
                }
            }
        }

        impl serde::Serialize for $name {
            /// Defined values as the specification's name, undefined ones as their number.
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                match self.label() {
                    Some(l) => s.serialize_str(l),
                    None => self.raw().serialize(s),
                }
            }
        }
    };
}

/// Messages with an empty body (most plain queries).
macro_rules! empty_message {
    ($( $(#[$meta:meta])* $name:ident ),* $(,)?) => {$(
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
        pub struct $name;

        impl $crate::jaus::wire::Body for $name {
            fn parse(_r: &mut $crate::jaus::wire::Reader<'_>) -> Result<Self, $crate::jaus::error::DecodeError> {
                Ok(Self)
            }

            fn emit(&self, _w: &mut $crate::jaus::wire::Writer) -> Result<(), $crate::jaus::error::EncodeError> {
                Ok(())
            }
        }
    )*};
}
