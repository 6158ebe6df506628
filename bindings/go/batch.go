package combsiv

/*
#include <stdlib.h>
#include <combsiv.h>
*/
import "C"

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"unsafe"
)

// Message is one message of a batch.
type Message struct {
	Nonce          []byte // NonceSize bytes
	Data           []byte // the plaintext (SealBatch) or ciphertext || tag (OpenBatch)
	AdditionalData []byte
}

// BatchError is OpenBatch's error when some messages are not authentic: Failed lists their
// indices. errors.Is(err, ErrAuthentication) holds.
type BatchError struct {
	Failed []int
}

func (e *BatchError) Error() string {
	return fmt.Sprintf("combsiv: %d messages of the batch are not authentic (first: %d)",
		len(e.Failed), e.Failed[0])
}

// Unwrap returns ErrAuthentication.
func (e *BatchError) Unwrap() error { return ErrAuthentication }

// SealBatch seals every message in one call into C and returns their ciphertext || tag, in
// order. AES-GCM-SIV ciphers interleave several messages in the vector registers, and a
// large batch runs on every core: for small messages this is much faster than Seal in a
// loop, which pays for a call into C per message. The messages are not changed; the results
// share one allocation. AES-GCM nonces must be unique within the batch as everywhere.
func (c *Cipher) SealBatch(messages []Message) ([][]byte, error) {
	return c.SealBatchWithThreads(messages, 0)
}

// SealBatchWithThreads is SealBatch on at most threads threads (0: as many as pay for
// themselves, as SealBatch).
func (c *Cipher) SealBatchWithThreads(messages []Message, threads int) ([][]byte, error) {
	sealed, err := c.SealBatchAppend(nil, messages, threads)
	if err != nil {
		return nil, err
	}
	return split(sealed, messages, TagSize), nil
}

// SealBatchAppend seals every message and appends their ciphertext || tag to dst, one after
// another in order (message i's is len(Data)+TagSize bytes), and returns the result: with a
// dst reused from batch to batch, a batch allocates nothing. threads as in
// SealBatchWithThreads. The bytes appended must not overlap any message.
func (c *Cipher) SealBatchAppend(dst []byte, messages []Message, threads int) ([]byte, error) {
	out, _, err := c.batch(dst, messages, true, threads)
	return out, err
}

// OpenBatch opens every message (ciphertext || tag) in one call into C and returns the
// plaintexts, in order. If some are not authentic it returns a *BatchError naming them, and
// their plaintexts are nil; the others are returned.
func (c *Cipher) OpenBatch(messages []Message) ([][]byte, error) {
	return c.OpenBatchWithThreads(messages, 0)
}

// OpenBatchWithThreads is OpenBatch on at most threads threads (0: as many as pay for
// themselves, as OpenBatch).
func (c *Cipher) OpenBatchWithThreads(messages []Message, threads int) ([][]byte, error) {
	opened, err := c.OpenBatchAppend(nil, messages, threads)
	var batchErr *BatchError
	if err != nil && !errors.As(err, &batchErr) {
		return nil, err
	}
	plaintexts := split(opened, messages, -TagSize)
	if batchErr != nil {
		for _, i := range batchErr.Failed {
			plaintexts[i] = nil
		}
	}
	return plaintexts, err
}

// OpenBatchAppend opens every message and appends their plaintexts to dst, one after another
// in order (message i's is len(Data)-TagSize bytes), and returns the result. If some are not
// authentic it returns a *BatchError naming them, and their plaintexts' bytes are zeroed.
func (c *Cipher) OpenBatchAppend(dst []byte, messages []Message, threads int) ([]byte, error) {
	out, failed, err := c.batch(dst, messages, false, threads)
	if err == nil && len(failed) != 0 {
		err = &BatchError{Failed: failed}
	}
	return out, err
}

// split cuts a batch's appended outputs into one slice per message: len(Data) + delta bytes
// each.
func split(outputs []byte, messages []Message, delta int) [][]byte {
	slices := make([][]byte, len(messages))
	at := 0
	for i := range messages {
		n := max(len(messages[i].Data)+delta, 0)
		slices[i] = outputs[at : at+n : at+n]
		at += n
	}
	return slices
}

// batch seals or opens the messages into the bytes appended to dst. Each message's input is
// copied to its place there and sealed or opened in place; the jobs, in C memory, point to
// those places, which are pinned meanwhile (C memory may hold pointers to pinned Go memory,
// and cgo does not walk it: checked Go-memory jobs cost more than sealing a 16-byte
// message). Associated data is copied into C memory beside the jobs.
func (c *Cipher) batch(dst []byte, messages []Message, sealing bool, threads int) ([]byte, []int, error) {
	if threads < 0 {
		return nil, nil, ErrInvalidArgument
	}
	delta := TagSize
	if !sealing {
		delta = -TagSize
	}
	grow, adTotal := 0, 0
	for i := range messages {
		m := &messages[i]
		if len(m.Nonce) != NonceSize {
			return nil, nil, ErrNonceSize
		}
		if len(m.Data) < TagSize && !sealing {
			m := *m
			m.Data = make([]byte, TagSize) // fails to open, as it must
			messages = append(append(append([]Message(nil), messages[:i]...), m), messages[i+1:]...)
		}
		grow += len(messages[i].Data) + delta
		adTotal += len(m.AdditionalData)
	}
	out, tail := sliceForAppend(dst, grow)
	if len(messages) == 0 {
		return out, nil, nil
	}
	if unsafe.SliceData(out) == unsafe.SliceData(dst) { // not freshly allocated: may overlap
		for i := range messages {
			if anyOverlap(tail, messages[i].Data) || anyOverlap(tail, messages[i].AdditionalData) {
				return nil, nil, ErrOverlap
			}
		}
	}
	a := arenas.Get().(*arena)
	defer a.release()
	jobs, ads := a.reserve(len(messages), adTotal)
	var pinner runtime.Pinner
	if len(tail) != 0 {
		pinner.Pin(&tail[0])
		defer pinner.Unpin()
	}
	at, adAt := 0, 0
	for i := range messages {
		m := &messages[i]
		body := len(m.Data)
		job := &jobs[i]
		if !sealing {
			body -= TagSize
			job.tag = *(*[TagSize]C.uint8_t)(unsafe.Pointer(unsafe.SliceData(m.Data[body:])))
		}
		data := tail[at : at+body]
		copy(data, m.Data[:body])
		ad := ads[adAt : adAt+len(m.AdditionalData)]
		copy(ad, m.AdditionalData)
		job.nonce = *(*[NonceSize]C.uint8_t)(unsafe.Pointer(unsafe.SliceData(m.Nonce)))
		// Stored as integers: a pointer store into C memory would run the write barrier,
		// which has nothing to record there and cost a third of this loop.
		*(*uintptr)(unsafe.Pointer(&job.data)) = uintptr(unsafe.Pointer(bytePtr(data)))
		*(*uintptr)(unsafe.Pointer(&job.ad)) = uintptr(unsafe.Pointer(bytePtr(ad)))
		job.data_len, job.ad_len, job.status = C.size_t(body), C.size_t(len(ad)), 0
		at += body + max(delta, 0)
		adAt += len(ad)
	}
	var code C.int
	if sealing {
		code = C.combsiv_aead_seal_batch(c.ctx, unsafe.SliceData(jobs), C.size_t(len(jobs)), C.size_t(threads))
	} else {
		code = C.combsiv_aead_open_batch(c.ctx, unsafe.SliceData(jobs), C.size_t(len(jobs)), C.size_t(threads))
	}
	runtime.KeepAlive(c)
	if code != C.COMBSIV_OK && (sealing || code != C.COMBSIV_EAUTH) {
		clear(tail)
		return nil, nil, Error(code)
	}
	var failed []int
	at = 0
	for i := range jobs {
		n := int(jobs[i].data_len)
		if sealing {
			*(*[TagSize]C.uint8_t)(unsafe.Pointer(&tail[at+n])) = jobs[i].tag
			n += TagSize
		} else if jobs[i].status != C.COMBSIV_OK {
			failed = append(failed, i)
		}
		at += n
	}
	return out, failed, nil
}

// arena is C memory for a batch's jobs and associated data (nothing confidential: the
// plaintexts stay in Go memory), kept in a pool for the next batch.
type arena struct {
	memory *cMemory
}

// cMemory is an arena's allocation, freed when the arena is collected.
type cMemory struct {
	base unsafe.Pointer
	size int
}

var arenas = sync.Pool{New: func() any {
	a := &arena{memory: &cMemory{}}
	runtime.AddCleanup(a, func(m *cMemory) { C.free(m.base) }, a.memory)
	return a
}}

// reserve returns room for count jobs and adBytes bytes of associated data.
func (a *arena) reserve(count, adBytes int) ([]C.combsiv_job, []byte) {
	jobsSize := count * int(unsafe.Sizeof(C.combsiv_job{}))
	size := jobsSize + adBytes
	if m := a.memory; m.size < size {
		C.free(m.base)
		m.size = max(size, 2*m.size, 4096)
		m.base = C.malloc(C.size_t(m.size))
		if m.base == nil {
			panic("combsiv: out of memory")
		}
	}
	bytes := unsafe.Slice((*byte)(a.memory.base), size)
	return unsafe.Slice((*C.combsiv_job)(a.memory.base), count), bytes[jobsSize:]
}

// release returns the arena to the pool.
func (a *arena) release() {
	arenas.Put(a)
}
