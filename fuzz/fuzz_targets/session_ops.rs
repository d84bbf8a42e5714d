#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| contextfold::fuzzing::session_ops(data));
