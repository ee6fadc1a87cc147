//! The app's entities.

pub mod document;
pub mod person;
