package combsiv

/*
#include <combsiv.h>
*/
import "C"

// Error is a libcombsiv status code; the values below are the ones its functions return.
// Compare with errors.Is.
type Error int

// The errors of this package.
const (
	ErrInvalidArgument Error = C.COMBSIV_EINVAL
	ErrAlgorithm       Error = C.COMBSIV_EALGORITHM
	ErrKeySize         Error = C.COMBSIV_EKEYLEN
	ErrNonceSize       Error = C.COMBSIV_ENONCELEN
	ErrBufferTooSmall  Error = C.COMBSIV_EBUFFER
	ErrOverlap         Error = C.COMBSIV_EOVERLAP
	ErrTooLong         Error = C.COMBSIV_ETOOLONG
	ErrAuthentication  Error = C.COMBSIV_EAUTH
	ErrBackend         Error = C.COMBSIV_EBACKEND
	ErrIO              Error = C.COMBSIV_EIO
	ErrFormat          Error = C.COMBSIV_EFORMAT
	ErrExist           Error = C.COMBSIV_EEXIST
	ErrInputChanged    Error = C.COMBSIV_ECHANGED
	ErrInternal        Error = C.COMBSIV_EINTERNAL
)

// Error describes the code as libcombsiv does.
func (e Error) Error() string {
	return "combsiv: " + C.GoString(C.combsiv_error_string(C.int(e)))
}

// status turns a libcombsiv status into nil or its Error.
func status(code C.int) error {
	if code == C.COMBSIV_OK {
		return nil
	}
	return Error(code)
}
