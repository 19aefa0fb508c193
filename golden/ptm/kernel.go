package ptm

// The two inner loops of the TPM updates. Every state's new mass is
// fl(fl(stay*own) + fl(move*neighbour)): two products rounded separately and
// then added, never fused into a multiply-add (the float64 conversions forbid
// fusion on architectures that have one), so the portable loops below and
// the assembly ones of kernel_amd64.s give the same bits.

// stayDownGo sets q[j] = stay*q[j] + down*q[j+1] for j = 0..len(q)-2 (each
// state keeps stay of its mass and receives down of the state above), in
// place, four states per iteration; q[len(q)-1] is read, not written.
func stayDownGo(q []float64, stay, down float64) {
	j := 0
	for ; j+4 < len(q); j += 4 {
		w := q[j : j+5 : j+5]
		a0, a1, a2, a3, a4 := w[0], w[1], w[2], w[3], w[4]
		w[0] = float64(stay*a0) + float64(down*a1)
		w[1] = float64(stay*a1) + float64(down*a2)
		w[2] = float64(stay*a2) + float64(down*a3)
		w[3] = float64(stay*a3) + float64(down*a4)
	}
	for ; j+1 < len(q); j++ {
		q[j] = float64(stay*q[j]) + float64(down*q[j+1])
	}
}

// stayUpGo sets q[j] = stay*q[j] + up*q[j-1] for j = len(q)-1 down to 1
// (each state keeps stay of its mass and receives up of the state below), in
// place; q[0] is read, not written.
func stayUpGo(q []float64, stay, up float64) {
	if len(q) < 2 {
		return
	}
	dst, src := q[1:], q[:len(q)-1]
	for j := len(dst) - 1; j >= 0; j-- {
		dst[j] = float64(stay*dst[j]) + float64(up*src[j])
	}
}
