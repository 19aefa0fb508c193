package hw

// infoWord is one word of the info ROM.
type infoWord struct {
	name string
	val  func(p *Params) uint32
}

// infoLayout is the info ROM, word by word (docs/core-interface.md).
var infoLayout = []infoWord{
	{"version", func(*Params) uint32 { return versionWord }},
	{"NT", func(p *Params) uint32 { return uint32(p.NT) }},
	{"NC", func(p *Params) uint32 { return uint32(p.NC) }},
	{"m", func(p *Params) uint32 { return uint32(p.M) }},
	{"o", func(p *Params) uint32 { return uint32(p.O) }},
	{"T", func(p *Params) uint32 { return uint32(p.T) }},
	{"B", func(p *Params) uint32 { return uint32(p.Bits) }},
	{"W", func(p *Params) uint32 { return uint32(p.W) }},
	{"LC", func(p *Params) uint32 { return uint32(p.LC) }},
	{"LL", func(p *Params) uint32 { return uint32(p.LL) }},
	{"D", func(p *Params) uint32 { return uint32(p.D) }},
	{"MaxK", func(p *Params) uint32 { return uint32(p.MaxK) }},
	{"hash32", func(p *Params) uint32 { return p.Hash32 }},
	{"flags", func(p *Params) uint32 {
		if p.Binary {
			return 1
		}
		return 0
	}},
	{"U", func(p *Params) uint32 { return uint32(p.Unit) }},
	{"G_BT", func(p *Params) uint32 { return uint32(p.G)<<16 | uint32(p.BT)&0xffff }},
}

// InfoWords returns the 16 words of the design's info ROM, address order:
// version, NT, NC, m, o, T, B, W, LC, LL, D, MaxK, hash32, flags (bit 0:
// binary), U = lcm(1..NC), G<<16 | BT.
func (d *Design) InfoWords() []uint32 {
	w := make([]uint32, len(infoLayout))
	for i, iw := range infoLayout {
		w[i] = iw.val(&d.Params)
	}
	return w
}
