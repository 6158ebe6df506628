// Package combsiv is AES-GCM-SIV (RFC 8452) and AES-GCM (NIST SP 800-38D) from libcombsiv,
// combsiv's C library, through cgo: the standard [cipher.AEAD] interface on per-CPU kernels
// (AES-NI, VAES, AVX-512, ARMv8), batches that seal or open many small messages in one call,
// and combsiv's file format file to file on every core.
//
// AES-GCM-SIV derives its IV from the message, so a nonce used twice under one key reveals
// only that the same message was encrypted again; with AES-GCM it reveals the XOR of the
// plaintexts and allows forgeries. Go's standard library has no AES-GCM-SIV.
//
// Building needs the installed C library, found through pkg-config:
//
//	cargo cinstall --release -p combsiv-ffi --prefix "$HOME/.local"
//	export PKG_CONFIG_PATH=$HOME/.local/lib/$(gcc -dumpmachine)/pkgconfig
//	export LD_LIBRARY_PATH=$HOME/.local/lib/$(gcc -dumpmachine)
//
// Every call into C costs tens of nanoseconds beyond the work: for many small messages,
// [Cipher.SealBatch] and [Cipher.OpenBatch] pay it once per batch.
package combsiv

/*
#cgo pkg-config: combsiv
#include <combsiv.h>
*/
import "C"

import "unsafe"

// TagSize is the length of the tag that Seal appends to every ciphertext.
const TagSize = C.COMBSIV_TAG_LEN

// NonceSize is the nonce length of both AEADs (AES-GCM's recommended one).
const NonceSize = C.COMBSIV_NONCE_LEN

// bytePtr is the address of b's first byte for C, or nil for an empty slice (C takes NULL
// with length 0).
func bytePtr(b []byte) *C.uint8_t {
	if len(b) == 0 {
		return nil
	}
	return (*C.uint8_t)(unsafe.Pointer(unsafe.SliceData(b)))
}

// anyOverlap reports whether x and y share memory.
func anyOverlap(x, y []byte) bool {
	return len(x) > 0 && len(y) > 0 &&
		uintptr(unsafe.Pointer(&x[0])) <= uintptr(unsafe.Pointer(&y[len(y)-1])) &&
		uintptr(unsafe.Pointer(&y[0])) <= uintptr(unsafe.Pointer(&x[len(x)-1]))
}

// inexactOverlap reports whether x and y share memory at different offsets: the aliasing
// crypto/cipher forbids (exactly the same start is allowed, for in-place calls).
func inexactOverlap(x, y []byte) bool {
	return anyOverlap(x, y) && &x[0] != &y[0]
}

// sliceForAppend extends in by n bytes: head is the whole result, tail the n new bytes.
func sliceForAppend(in []byte, n int) (head, tail []byte) {
	if total := len(in) + n; cap(in) >= total {
		head = in[:total]
	} else {
		head = make([]byte, total)
		copy(head, in)
	}
	tail = head[len(in):]
	return
}
