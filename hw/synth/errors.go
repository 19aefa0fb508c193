package synth

import "errors"

// Sentinel errors; every error Run returns wraps one of them (or a context
// error) so callers can tell the failures apart with errors.Is. The error
// text is one line and ends with the path of the full log where one
// exists.
var (
	// ErrDevice: the device name is not supported.
	ErrDevice = errors.New("synth: unknown device")
	// ErrToolMissing: yosys, nextpnr-ice40, icepack or icepll is not on
	// PATH (scripts/install-deps.sh installs them).
	ErrToolMissing = errors.New("synth: tool missing")
	// ErrNoFit: the design needs more of a resource than the device has.
	ErrNoFit = errors.New("synth: design does not fit")
	// ErrTiming: place and route finished but the core clock misses the
	// target frequency. Run returns the full Result with this error.
	ErrTiming = errors.New("synth: timing not met")
	// ErrTool: a tool failed for another reason.
	ErrTool = errors.New("synth: tool failed")
	// ErrOptions: the options are inconsistent.
	ErrOptions = errors.New("synth: bad options")
)
