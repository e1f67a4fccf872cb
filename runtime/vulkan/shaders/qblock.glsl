// Block-quantized weights (q8_0, q4_0: ggml's blocks, docs/dtypes.md section 8) read from a
// buffer of 32-bit words `w`. A block is 34 (q8_0) or 18 (q4_0) bytes, so it starts on an even
// byte but only every other block on a word: its f16 scale is the low or high half of its first
// word, and its quants are re-aligned into whole words by shifts. The includer declares `w`
// (uint words) and the specialization constant KIND (0: q8_0, 1: q4_0), and includes half.glsl.
#define QB_BYTES (KIND == 0u ? 34u : 18u)
#define QB_WORDS (KIND == 0u ? 8u : 4u) // words of quants: 32 bytes or 16 bytes

// Block `b` (counted over the whole buffer): its scale as f32 and its quants in q[0 .. QB_WORDS),
// byte j of the quants being byte (j & 3) of q[j >> 2] (q8_0: value j as a signed byte; q4_0:
// value j in the low nibble, value j + 16 in the high nibble).
float qb_load(uint b, out uint q[8])
{
    const uint o = b * QB_BYTES;
    const uint base = o >> 2;
    const bool odd = (o & 2u) != 0u; // the scale is the high half of the first word
    uint prev = w[base];
    const uint h = odd ? prev >> 16 : prev & 0xffffu;
    for (uint t = 0u; t < QB_WORDS; t++) {
        const uint nx = w[base + 1u + t];
        q[t] = odd ? nx : (prev >> 16) | (nx << 16);
        prev = nx;
    }
    return uintBitsToFloat(f16_to_f32(h));
}

// The 4 values of quant word t of a block as floats (before the scale): q8_0 bytes 4t .. 4t+3;
// q4_0 values 4t .. 4t+3 (hi false) or 16+4t .. 16+4t+3 (hi true).
vec4 qb_vals(uint qw, bool hi)
{
    if (KIND == 0u)
        return vec4(bitfieldExtract(int(qw), 0, 8), bitfieldExtract(int(qw), 8, 8),
                    bitfieldExtract(int(qw), 16, 8), bitfieldExtract(int(qw), 24, 8));
    const uint s = hi ? 4u : 0u;
    return vec4(float((qw >> s) & 15u), float((qw >> (8u + s)) & 15u), float((qw >> (16u + s)) & 15u),
                float((qw >> (24u + s)) & 15u)) - 8.0;
}
