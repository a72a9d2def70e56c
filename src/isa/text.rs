//! Text form (placeholder, filled next).
