package combsiv

/*
#include <stdlib.h>
#include <combsiv.h>
*/
import "C"

import (
	"crypto/cipher"
	"runtime"
	"unsafe"
)

// Algorithm is one of the AEADs a Cipher runs.
type Algorithm int

// The algorithms, as libcombsiv numbers them.
const (
	AES128GCMSIV Algorithm = C.COMBSIV_AES_128_GCM_SIV
	AES256GCMSIV Algorithm = C.COMBSIV_AES_256_GCM_SIV
	AES128GCM    Algorithm = C.COMBSIV_AES_128_GCM
	AES256GCM    Algorithm = C.COMBSIV_AES_256_GCM
)

func (a Algorithm) String() string {
	switch a {
	case AES128GCMSIV:
		return "AES-128-GCM-SIV"
	case AES256GCMSIV:
		return "AES-256-GCM-SIV"
	case AES128GCM:
		return "AES-128-GCM"
	case AES256GCM:
		return "AES-256-GCM"
	}
	return "unknown algorithm"
}

// Cipher is an AEAD with its key in C memory, wiped when the Cipher is closed or collected.
// It implements [cipher.AEAD]; its methods may be called from many goroutines at once.
type Cipher struct {
	ctx       *C.combsiv_aead
	algorithm Algorithm
	cleanup   runtime.Cleanup
}

var _ cipher.AEAD = (*Cipher)(nil)

// NewAESGCMSIV returns AES-GCM-SIV (RFC 8452) with a 16-byte (AES-128) or 32-byte (AES-256)
// key, on the fastest backend this CPU runs. Nonces are 12 bytes.
func NewAESGCMSIV(key []byte) (cipher.AEAD, error) {
	return newBySize(key, AES128GCMSIV, AES256GCMSIV)
}

// NewAESGCM returns AES-GCM (NIST SP 800-38D) with a 16-byte (AES-128) or 32-byte (AES-256)
// key and 12-byte nonces, which must never repeat under one key.
func NewAESGCM(key []byte) (cipher.AEAD, error) {
	return newBySize(key, AES128GCM, AES256GCM)
}

func newBySize(key []byte, aes128, aes256 Algorithm) (cipher.AEAD, error) {
	algorithm := aes256
	if len(key) == 16 {
		algorithm = aes128
	}
	c, err := New(algorithm, key)
	if err != nil {
		return nil, err
	}
	return c, nil
}

// New returns a Cipher for algorithm with key (16 bytes for AES-128, 32 for AES-256): the
// same as NewAESGCMSIV and NewAESGCM, with the batch, backend and Close methods in its type.
// The environment variable COMBSIV_BACKEND (portable, aesni, vaes, avx512, armv8) pins the
// backend, as it does in every combsiv front.
func New(algorithm Algorithm, key []byte) (*Cipher, error) {
	return newCipher(algorithm, key, nil)
}

// NewWithBackend is New on the backend named (portable, aesni, vaes, avx512 or armv8):
// ErrBackend if this CPU cannot run it. For tests and measurements.
func NewWithBackend(algorithm Algorithm, key []byte, backend string) (*Cipher, error) {
	name := C.CString(backend)
	defer C.free(unsafe.Pointer(name))
	return newCipher(algorithm, key, name)
}

func newCipher(algorithm Algorithm, key []byte, backend *C.char) (*Cipher, error) {
	var ctx *C.combsiv_aead
	var code C.int
	if backend == nil {
		code = C.combsiv_aead_new(C.combsiv_algorithm(algorithm), bytePtr(key), C.size_t(len(key)), &ctx)
	} else {
		code = C.combsiv_aead_new_with_backend(C.combsiv_algorithm(algorithm), bytePtr(key),
			C.size_t(len(key)), backend, &ctx)
	}
	if err := status(code); err != nil {
		return nil, err
	}
	c := &Cipher{ctx: ctx, algorithm: algorithm}
	c.cleanup = runtime.AddCleanup(c, func(ctx *C.combsiv_aead) { C.combsiv_aead_free(ctx) }, ctx)
	return c, nil
}

// Close frees the key now (otherwise the garbage collector frees it) and wipes it. The
// Cipher must not be used afterwards, nor while Close runs; a second Close does nothing.
func (c *Cipher) Close() error {
	if c.ctx != nil {
		c.cleanup.Stop()
		C.combsiv_aead_free(c.ctx)
		c.ctx = nil
	}
	return nil
}

// Algorithm returns the cipher's algorithm.
func (c *Cipher) Algorithm() Algorithm { return c.algorithm }

// Backend names the kernels the cipher runs on: portable, aesni, vaes, avx512 or armv8.
func (c *Cipher) Backend() string {
	name := C.combsiv_backend_name(c.ctx)
	runtime.KeepAlive(c)
	if name == nil {
		return ""
	}
	return C.GoString(name)
}

// NonceSize returns 12.
func (c *Cipher) NonceSize() int { return NonceSize }

// Overhead returns the tag size, 16.
func (c *Cipher) Overhead() int { return TagSize }

// Seal encrypts and authenticates plaintext with nonce and additionalData, appends
// ciphertext || tag to dst and returns the result. To reuse plaintext's storage for the
// output, use plaintext[:0] as dst; any other overlap of dst with plaintext panics, as does
// a nonce that is not NonceSize bytes (the crypto/cipher contract).
func (c *Cipher) Seal(dst, nonce, plaintext, additionalData []byte) []byte {
	if len(nonce) != NonceSize {
		panic("combsiv: incorrect nonce length given to " + c.algorithm.String())
	}
	ret, out := sliceForAppend(dst, len(plaintext)+TagSize)
	if inexactOverlap(out, plaintext) {
		panic("combsiv: invalid buffer overlap")
	}
	if anyOverlap(out, additionalData) {
		additionalData = append([]byte(nil), additionalData...)
	}
	var written C.size_t
	code := C.combsiv_aead_seal(c.ctx, bytePtr(out), &written, C.size_t(len(out)),
		bytePtr(nonce), C.size_t(len(nonce)), bytePtr(plaintext), C.size_t(len(plaintext)),
		bytePtr(additionalData), C.size_t(len(additionalData)))
	runtime.KeepAlive(c)
	if err := status(code); err != nil {
		panic(err.Error()) // only a message over the algorithm's limit, as Go's GCM panics
	}
	return ret
}

// Open authenticates and decrypts ciphertext (ciphertext || tag) with nonce and
// additionalData, appends the plaintext to dst and returns the result; on failure it returns
// ErrAuthentication and no plaintext (the bytes Open wrote into dst's spare capacity are
// zeroed). To reuse ciphertext's storage, use ciphertext[:0] as dst; any other overlap
// panics, as does a nonce that is not NonceSize bytes.
func (c *Cipher) Open(dst, nonce, ciphertext, additionalData []byte) ([]byte, error) {
	if len(nonce) != NonceSize {
		panic("combsiv: incorrect nonce length given to " + c.algorithm.String())
	}
	if len(ciphertext) < TagSize {
		return nil, ErrAuthentication
	}
	ret, out := sliceForAppend(dst, len(ciphertext)-TagSize)
	if inexactOverlap(out, ciphertext) {
		panic("combsiv: invalid buffer overlap")
	}
	if anyOverlap(out, additionalData) {
		additionalData = append([]byte(nil), additionalData...)
	}
	var written C.size_t
	code := C.combsiv_aead_open(c.ctx, bytePtr(out), &written, C.size_t(len(out)),
		bytePtr(nonce), C.size_t(len(nonce)), bytePtr(ciphertext), C.size_t(len(ciphertext)),
		bytePtr(additionalData), C.size_t(len(additionalData)))
	runtime.KeepAlive(c)
	if err := status(code); err != nil {
		return nil, err
	}
	return ret, nil
}
