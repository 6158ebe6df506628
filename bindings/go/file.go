package combsiv

/*
#include <stdlib.h>
#include <combsiv.h>
*/
import "C"

import "unsafe"

// FileOptions tune EncryptFile and DecryptFile; the zero value (or nil) asks for the
// defaults.
type FileOptions struct {
	ChunkSize uint32 // encryption: a power of two from 4 KiB to 16 MiB; 0 is 1 MiB
	KeyBits   int    // encryption: 128 or 256, the AES key size of the chunks; 0 is 256
	Threads   int    // 0 is one per available core
	Overwrite bool   // replace an existing output file instead of ErrExist
}

// EncryptFile encrypts the file src into the file dst in combsiv's stream format (the
// combsiv command's files) under a 32-byte master key, on every core, and returns the
// plaintext length. dst is written to a private temporary file beside it and renamed when
// complete: a failure leaves the old dst (or none).
func EncryptFile(src, dst string, key []byte, options *FileOptions) (int64, error) {
	return runFile(true, src, dst, key, options)
}

// DecryptFile decrypts the stream-format file src into dst under its 32-byte master key
// and returns the plaintext length. A wrong key or a damaged or truncated file is
// ErrAuthentication, and no unverified byte is ever at dst.
func DecryptFile(src, dst string, key []byte, options *FileOptions) (int64, error) {
	return runFile(false, src, dst, key, options)
}

func runFile(encrypt bool, src, dst string, key []byte, options *FileOptions) (int64, error) {
	var c C.combsiv_stream_options
	if options != nil {
		if options.KeyBits < 0 || options.Threads < 0 {
			return 0, ErrInvalidArgument
		}
		c.chunk_size = C.uint32_t(options.ChunkSize)
		c.key_bits = C.uint32_t(options.KeyBits)
		c.threads = C.size_t(options.Threads)
		if options.Overwrite {
			c.overwrite = 1
		}
	}
	cSrc, cDst := C.CString(src), C.CString(dst)
	defer C.free(unsafe.Pointer(cSrc))
	defer C.free(unsafe.Pointer(cDst))
	var length C.uint64_t
	var code C.int
	if encrypt {
		code = C.combsiv_stream_encrypt_file(cSrc, cDst, bytePtr(key), C.size_t(len(key)), &c, &length)
	} else {
		code = C.combsiv_stream_decrypt_file(cSrc, cDst, bytePtr(key), C.size_t(len(key)), &c, &length)
	}
	if err := status(code); err != nil {
		return 0, err
	}
	return int64(length), nil
}
