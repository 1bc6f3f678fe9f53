//! Named choices: enums whose variants a spec names by a string, each name written once; and
//! the suggestion for a misspelt name.

/// An enum a spec field chooses by name.
pub trait Choice: Copy + PartialEq + 'static {
    /// Every variant with its name, in documentation order.
    const OPTIONS: &'static [(&'static str, Self)];

    /// The variant's name.
    fn name(self) -> &'static str {
        Self::OPTIONS
            .iter()
            .find(|(_, v)| *v == self)
            .map(|(n, _)| *n)
            .expect("every variant is in OPTIONS")
    }

    /// Every name, in documentation order.
    fn names() -> Vec<&'static str> {
        Self::OPTIONS.iter().map(|(n, _)| *n).collect()
    }
}

/// Declares a [`Choice`] enum: each variant with its name; serializes as the name.
///
/// ```ignore
/// choice! {
///     /// Load balancing over equal-cost paths.
///     pub enum LoadBalancing {
///         /// Per-packet round robin.
///         Spray = "spray",
///         /// Per-flow hash.
///         Ecmp = "ecmp",
///     }
/// }
/// ```
#[macro_export]
macro_rules! choice {
    (
        $(#[$meta:meta])*
        pub enum $name:ident {
            $($(#[$vmeta:meta])* $variant:ident = $str:literal,)+
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum $name {
            $($(#[$vmeta])* $variant,)+
        }

        impl $crate::choice::Choice for $name {
            const OPTIONS: &'static [(&'static str, Self)] = &[$(($str, $name::$variant),)+];
            fn name(self) -> &'static str {
                match self {
                    $($name::$variant => $str,)+
                }
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str($crate::choice::Choice::name(*self))
            }
        }

        // By name, as serialized (a checkpoint holds choices inside the run's state).
        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let name = <std::borrow::Cow<'de, str> as serde::Deserialize>::deserialize(d)?;
                <Self as $crate::choice::Choice>::OPTIONS
                    .iter()
                    .find(|(n, _)| *n == name)
                    .map(|(_, v)| *v)
                    .ok_or_else(|| serde::de::Error::unknown_variant(&name, &[]))
            }
        }
    };
}

/// Edit distance, for "did you mean" suggestions.
fn levenshtein(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            cur[j + 1] = (prev[j] + usize::from(ca != *cb)).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// The closest of `candidates` to `word`, if close enough to be a likely typo.
pub fn suggest<'c>(word: &str, candidates: &[&'c str]) -> Option<&'c str> {
    candidates
        .iter()
        .map(|c| (levenshtein(&word.to_lowercase(), c), *c))
        .filter(|(d, c)| *d <= 2.max(c.len() / 3))
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}
