//! One test per rule of SPEC §5 that the table cannot express.
