//! The readable form of a [`MetricsReport`] (the default output of `prvsight metrics`).
