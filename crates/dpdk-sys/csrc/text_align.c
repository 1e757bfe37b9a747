/* Linked whole just before DPDK's static archives (build.rs): this function's section
 * asks for 4 KiB alignment, so the DPDK code after it (the PMDs' RX and TX, the mempool)
 * starts at the same offset in a page whatever the size of the Rust code before it. */
__attribute__((aligned(4096), noinline, used)) void mplsrouter_dpdk_text_start(void) {}

/* The linker keeps only sections something reaches (--gc-sections): a constructor's
 * entry in .init_array is always kept, and it reaches the function above. */
__attribute__((constructor)) static void mplsrouter_dpdk_text_keep(void) {
    void (*volatile f)(void) = mplsrouter_dpdk_text_start;
    (void)f;
}
