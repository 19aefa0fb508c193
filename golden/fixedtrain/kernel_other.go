//go:build !amd64 || purego

package fixedtrain

// transfers is transfersGo (no assembly for this architecture or build).
func transfers(t, q, dith []uint16, r uint16, prob uint32) { transfersGo(t, q, dith, r, prob) }

// combine is combineGo (no assembly for this architecture or build).
func combine(q, t []uint16, up bool) { combineGo(q, t, up) }
