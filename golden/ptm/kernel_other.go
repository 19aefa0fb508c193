//go:build !amd64 || purego

package ptm

// stayDown is stayDownGo (no assembly for this architecture or build).
func stayDown(q []float64, stay, down float64) { stayDownGo(q, stay, down) }

// stayUp is stayUpGo (no assembly for this architecture or build).
func stayUp(q []float64, stay, up float64) { stayUpGo(q, stay, up) }
