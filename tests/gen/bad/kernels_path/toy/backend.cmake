# the kernel folder of backends/a.lua's toy (never built)
