//! How an architecture's one list of tiers (`tiers!`, in `cpu/<arch>.rs`) becomes code:
//! [`TierToken`](crate::cpu::TierToken) with its mappings (`declare_tier_token!`), and each
//! kernel's instances and dispatch (`per_tier!`). Shared by every architecture; the macros
//! are exported for the comb engine's kernels in combsiv-modes.

/// Declares an architecture's [`TierToken`] and its mappings from the architecture's one list
/// of tiers ([`tiers!`], in `cpu/<arch>.rs`): which tier, with its token; the [`Backend`] it
/// is; how many comb lanes one lane-kernel call runs on it.
#[doc(hidden)]
#[macro_export]
macro_rules! declare_tier_token {
    (
        tiers: [$(
            $(#[doc = $doc:literal])*
            $(#[cfg($cfg:meta)])?
            $variant:ident($token:ty) = $backend:ident, $features:literal;
        )*]
    ) => {
        /// The tier a key runs on, with the token that proves it.
        #[derive(Clone, Copy, Debug)]
        pub enum TierToken {
            $(
                $(#[doc = $doc])*
                $(#[cfg($cfg)])?
                $variant($token),
            )*
        }

        impl TierToken {
            /// The backend this tier is.
            pub fn backend(self) -> $crate::cpu::Backend {
                match self {
                    $(
                        $(#[cfg($cfg)])?
                        TierToken::$variant(_) => $crate::cpu::Backend::$backend,
                    )*
                }
            }

            /// Comb lanes one lane-kernel call runs on this tier ([`Tier::COMB_LANES`]): a
            /// plain match, not a call into an instance, since the comb asks for it per window.
            #[cfg(feature = "alloc")]
            pub fn comb_lanes(self) -> usize {
                match self {
                    $(
                        $(#[cfg($cfg)])?
                        TierToken::$variant(_) => <$token as $crate::cpu::Tier>::COMB_LANES,
                    )*
                }
            }
        }
    };
}

/// Instantiates a kernel written once over [`Tier`] for every tier of the architecture (its
/// [`tiers!`] list) and dispatches on the [`TierToken`]: each instance is a
/// `#[target_feature]` function enabling exactly its token's features, so the generic code
/// (all `#[inline(always)]`) compiles into it with those instructions, and it is called with
/// the token in hand.
///
/// `per_tier! { fn name<L: Layout, const C: T>(a: A) -> R = kernel; }` defines
/// `fn name<L: Layout, const C: T>(tier: TierToken, a: A) -> R`, which runs
/// `kernel::<W, L, C>(token, a)`; the type parameter and the const parameters are optional.
///
/// The instances are never inlined: a kernel called from another kernel of the same tier
/// (the batch calls the single-message kernel for long messages) then runs exactly the code
/// it runs when called alone, which is the code that was measured.
#[doc(hidden)]
#[macro_export]
macro_rules! per_tier {
    (
        $(#[$meta:meta])*
        $vis:vis fn $name:ident <$tparam:ident: $tbound:ident $(, const $param:ident: $param_ty:ty)*>
            ($($arg:ident: $arg_ty:ty),* $(,)?) $(-> $ret:ty)? = $kernel:ident;
    ) => {
        $crate::cpu::tiers!([$crate::cpu::instances] {
            [$(#[$meta])*] [$vis] $name
            [$tparam: $crate::layout::$tbound $(, const $param: $param_ty)*]
            [$tparam: $crate::layout::$tbound $(, const $param: $param_ty)*]
            [$tparam $(, $param)*]
            [$($arg: $arg_ty),*] [$($arg: $arg_ty),*] [$($arg),*] [$(-> $ret)?] [$(-> $ret)?]
            $kernel
        });
    };
    (
        $(#[$meta:meta])*
        $vis:vis fn $name:ident $(<$(const $param:ident: $param_ty:ty),+>)?
            ($($arg:ident: $arg_ty:ty),* $(,)?) $(-> $ret:ty)? = $kernel:ident;
    ) => {
        $crate::cpu::tiers!([$crate::cpu::instances] {
            [$(#[$meta])*] [$vis] $name
            [$($(const $param: $param_ty),+)?] [$($(const $param: $param_ty),+)?]
            [$($($param),+)?]
            [$($arg: $arg_ty),*] [$($arg: $arg_ty),*] [$($arg),*] [$(-> $ret)?] [$(-> $ret)?]
            $kernel
        });
    };
}

/// [`per_tier!`]'s function: one instance per tier of the list, then the dispatch. The
/// generics, arguments and return type come twice: taken apart for the function, and whole
/// (one token tree each) for the instances, which repeat once per tier.
#[doc(hidden)]
#[macro_export]
macro_rules! instances {
    (
        [$($meta:tt)*] [$vis:vis] $name:ident [$($generics:tt)*] $generics_whole:tt $params:tt
            [$($arg:ident: $arg_ty:ty),*] $args_whole:tt $call:tt [$($ret:tt)*] $ret_whole:tt
            $kernel:ident
        tiers: [$(
            $(#[doc = $doc:literal])*
            $(#[cfg($cfg:meta)])?
            $variant:ident($token:ty) = $backend:ident, $features:literal;
        )*]
    ) => {
        $($meta)*
        #[allow(unsafe_code, reason = "calls the instance whose features the token proves")]
        $vis fn $name <$($generics)*> (
            token: $crate::cpu::TierToken,
            $($arg: $arg_ty),*
        ) $($ret)* {
            $(
                $(#[cfg($cfg)])?
                $crate::cpu::instance!($variant($token), $features, $generics_whole $params
                    $args_whole $call $ret_whole $kernel);
            )*
            match token {
                $(
                    $(#[cfg($cfg)])?
                    // SAFETY: the token proves the CPU has the features its instance enables.
                    $crate::cpu::TierToken::$variant(token) => unsafe {
                        $crate::cpu::call_instance!($variant(token) $params $call)
                    },
                )*
            }
        }
    };
}

/// One instance of [`per_tier!`]'s kernel: a `#[target_feature]` function named after its
/// tier, never inlined.
#[doc(hidden)]
#[macro_export]
macro_rules! instance {
    (
        $variant:ident($token:ty), $features:literal, [$($generics:tt)*] [$($params:tt)*]
            [$($arg:ident: $arg_ty:ty),*] [$($call:ident),*] [$($ret:tt)*] $kernel:ident
    ) => {
        #[allow(non_snake_case, reason = "an instance is named after its token")]
        #[inline(never)]
        #[target_feature(enable = $features)]
        fn $variant <$($generics)*> (tier: $token, $($arg: $arg_ty),*) $($ret)* {
            $kernel::<$token, $($params)*>(tier, $($call),*)
        }
    };
}

/// A call of one instance of [`per_tier!`]'s kernel with its token and arguments.
#[doc(hidden)]
#[macro_export]
macro_rules! call_instance {
    ($variant:ident($token:ident) [$($params:tt)*] [$($call:ident),*]) => {
        $variant::<$($params)*>($token, $($call),*)
    };
}
