//go:build !amd64 || purego

package fixedtrain

// moveUp is moveUpGo (no assembly for this architecture or build).
func moveUp(R, dith []uint16, cnt int, r uint16, prob uint32) { moveUpGo(R, dith, cnt, r, prob, 0) }

// moveDown is moveDownGo (no assembly for this architecture or build).
func moveDown(R, dith []uint16, cnt int, r uint16, prob uint32) {
	moveDownGo(R, dith, cnt, r, prob, 0)
}
