package combsiv

import (
	"crypto/cipher"
	"fmt"
	"strings"
	"testing"
)

// internetMix is combsiv-bench's Internet mix (crates/combsiv-bench/src/workloads.rs): 1000
// message lengths from SplitMix64 with a fixed start, 44 % in 40..=100 bytes, 37 % in
// 1400..=1500 and 19 % in 101..=1399, shuffled.
func internetMix() []int {
	state := uint64(0x0C0B_5EED)
	next := func() uint64 {
		state += 0x9E37_79B9_7F4A_7C15
		z := state
		z = (z ^ (z >> 30)) * 0xBF58_476D_1CE4_E5B9
		z = (z ^ (z >> 27)) * 0x94D0_49BB_1331_11EB
		return z ^ (z >> 31)
	}
	inRange := func(low, high int) int { return low + int(next()%uint64(high-low+1)) }
	var sizes []int
	for _, part := range [][3]int{{440, 40, 100}, {370, 1400, 1500}, {190, 101, 1399}} {
		for i := 0; i < part[0]; i++ {
			sizes = append(sizes, inRange(part[1], part[2]))
		}
	}
	for i := len(sizes) - 1; i > 0; i-- {
		j := inRange(0, i)
		sizes[i], sizes[j] = sizes[j], sizes[i]
	}
	return sizes
}

type subject struct {
	name string
	aead cipher.AEAD
}

// subjects are Go's AES-GCM and ours, AES-GCM and AES-GCM-SIV, with keyBits-bit keys.
func subjects(b *testing.B, keyBits int) []subject {
	key := make([]byte, keyBits/8)
	siv, err := NewAESGCMSIV(key)
	if err != nil {
		b.Fatal(err)
	}
	gcm, err := NewAESGCM(key)
	if err != nil {
		b.Fatal(err)
	}
	backend := "-" + siv.(*Cipher).Backend()
	return []subject{
		{fmt.Sprintf("go-aes-%d-gcm", keyBits), goGCM(b, key)},
		{fmt.Sprintf("combsiv-aes-%d-gcm%s", keyBits, backend), gcm},
		{fmt.Sprintf("combsiv-aes-%d-gcm-siv%s", keyBits, backend), siv},
	}
}

// BenchmarkSeal seals messages one Seal call each, into a reused buffer, with a fresh nonce
// per message (AES-GCM-SIV derives its per-message keys from it).
func BenchmarkSeal(b *testing.B) {
	workloads := []struct {
		name  string
		sizes []int
	}{{"16", []int{16}}, {"1024", []int{1024}}, {"16384", []int{16384}}, {"mix", internetMix()}}
	for _, w := range workloads {
		total := 0
		for _, n := range w.sizes {
			total += n
		}
		for _, s := range append(subjects(b, 128), subjects(b, 256)...) {
			b.Run(w.name+"/"+s.name, func(b *testing.B) {
				nonce := make([]byte, 12)
				msg := make([]byte, 16384)
				out := make([]byte, 0, 16384+16)
				b.SetBytes(int64(total))
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					for _, n := range w.sizes {
						nonce[0]++
						out = s.aead.Seal(out[:0], nonce, msg[:n], nil)
					}
				}
			})
		}
	}
}

// BenchmarkSealBatch seals 16-byte messages through SealBatchWithThreads, 1000 to a call, on
// one thread (as Seal runs) and on every core; ns/op is per message, to set beside
// BenchmarkSeal/16.
func BenchmarkSealBatch(b *testing.B) {
	for _, algorithm := range []Algorithm{AES128GCMSIV, AES256GCMSIV, AES128GCM, AES256GCM} {
		c, err := New(algorithm, make([]byte, map[bool]int{true: 16, false: 32}[algorithm == AES128GCMSIV || algorithm == AES128GCM]))
		if err != nil {
			b.Fatal(err)
		}
		const count = 1000
		messages := make([]Message, count)
		for i := range messages {
			nonce := make([]byte, 12)
			nonce[0], nonce[1] = byte(i), byte(i>>8)
			messages[i] = Message{Nonce: nonce, Data: make([]byte, 16)}
		}
		name := fmt.Sprintf("16/combsiv-%s-%s", strings.ToLower(algorithm.String()), c.Backend())
		for _, threads := range []int{1, 2, 0} {
			b.Run(fmt.Sprintf("%s/threads=%d", name, threads), func(b *testing.B) {
				b.SetBytes(16)
				for i := 0; i < b.N; i += count {
					if _, err := c.SealBatchWithThreads(messages, threads); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run(fmt.Sprintf("%s/append/threads=%d", name, threads), func(b *testing.B) {
				b.SetBytes(16)
				var sealed []byte
				var err error
				for i := 0; i < b.N; i += count {
					if sealed, err = c.SealBatchAppend(sealed[:0], messages, threads); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
