// The plugins' self-registration records use SE-0492 `@section`/`@used`, which came with the
// Swift 6.3 toolchain. Stop older compilers with one clear message instead of many errors.
#if !compiler(>=6.3)
#error("NukeCodecs needs Swift 6.3 or later (SE-0492 @section/@used for codec self-registration)")
#endif
