// Reductions of a viewed as [outer, size, inner] into [outer, inner]: sum, mean, max, min, argmax, argmin.
#version 450
layout(local_size_x = 256) in;
layout(std430, binding = 0) readonly buffer P { uint p[]; };
layout(std430, binding = 1) readonly buffer A { uint a[]; };
layout(std430, binding = 4) writeonly buffer O { uint o[]; };

// p: outer, size, inner, op, n (elements of a; a partial last slab is cut there)
void main()
{
    uint t = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * 256u + gl_LocalInvocationID.x;
    uint outer = p[0], size = p[1], inner = p[2], op = p[3], n = p[4];
    if (t >= outer * inner)
        return;
    uint base = (t / inner) * size * inner + t % inner;
    uint cnt = size;
    if (base + (size - 1u) * inner >= n)
        cnt = (n - base + inner - 1u) / inner;
    if (op == 6u) {                                   // int sum, wrapping
        uint acc = 0u;
        for (uint k = 0u; k < cnt; k++)
            acc += a[base + k * inner];
        o[t] = acc;
        return;
    }
    if (op <= 1u) {                                   // compensated (Kahan) float sum
        precise float s = 0.0, c = 0.0;
        for (uint k = 0u; k < cnt; k++) {
            precise float y = uintBitsToFloat(a[base + k * inner]) - c;
            precise float u = s + y;
            c = isinf(u) ? 0.0 : (u - s) - y;  // an infinite sum would turn c into NaN
            s = u;
        }
        o[t] = floatBitsToUint(op == 1u ? s / float(size) : s);
        return;
    }
    float best = uintBitsToFloat(a[base]);
    uint idx = 0u;
    bool want_max = op == 2u || op == 4u;
    for (uint k = 1u; k < cnt; k++) {
        float v = uintBitsToFloat(a[base + k * inner]);
        bool beats = !isnan(best) && (isnan(v) || (want_max ? v > best : v < best));
        if (beats) {
            best = v;
            idx = k;
        }
    }
    o[t] = op <= 3u ? floatBitsToUint(best) : idx;
}
