# The headers `cmake --install` installs, per layer: the contract's headers (docs/api.md, section 1)
# and the headers they include. The other headers of the layers are internal (the lowering passes,
# the simplifier's rules, the executable form, the scheduler's parts): they are not installed, so
# that a client cannot include them by mistake. The test slinky_installed_headers (check_headers.cmake)
# fails when an installed header includes one that is not installed.
set(SLINKY_PUBLIC_HEADERS_base
    allocator.h arithmetic.h assert.h atomic_wait.h chrome_trace.h function_ref.h modulus_remainder.h ref_count.h
    set.h span.h thread_pool.h thread_pool_impl.h util.h)
set(SLINKY_PUBLIC_HEADERS_runtime
    buffer.h depends_on.h dim.h dim_optimizers.h evaluate.h expr.h for_each.h interval_expr.h memory_report.h
    node_mutator.h pipeline.h print.h stmt.h substitutor.h symbol_map.h visualize.h)
set(SLINKY_PUBLIC_HEADERS_builder
    explain.h node_mutator.h pipeline.h replica_pipeline.h simplify.h substitute.h symbol_map.h)
set(SLINKY_PUBLIC_HEADERS_scheduler auto_pipeline.h machine.h schedule.h)
