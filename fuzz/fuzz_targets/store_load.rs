#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| contextfold::fuzzing::store_load(data));
