package combsiv

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"errors"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func goGCM(t testing.TB, key []byte) cipher.AEAD {
	block, err := aes.NewCipher(key)
	if err != nil {
		t.Fatal(err)
	}
	gcm, err := cipher.NewGCM(block)
	if err != nil {
		t.Fatal(err)
	}
	return gcm
}

// TestDifferentialGoGCM seals random messages with Go's own AES-GCM and ours, on every
// backend: the same bytes, and each opens the other's.
func TestDifferentialGoGCM(t *testing.T) {
	rng := mrand.New(mrand.NewPCG(1, 2))
	for _, backend := range backendsUnderTest(t) {
		for _, keyLen := range []int{16, 32} {
			algorithm := map[int]Algorithm{16: AES128GCM, 32: AES256GCM}[keyLen]
			for round := 0; round < 300; round++ {
				key := make([]byte, keyLen)
				rand.Read(key)
				ours, err := NewWithBackend(algorithm, key, backend)
				if err != nil {
					t.Fatal(err)
				}
				theirs := goGCM(t, key)
				nonce, msg, aad := make([]byte, 12), make([]byte, rng.IntN(600)), make([]byte, rng.IntN(40))
				rand.Read(nonce)
				rand.Read(msg)
				rand.Read(aad)
				sealed := ours.Seal(nil, nonce, msg, aad)
				if want := theirs.Seal(nil, nonce, msg, aad); !bytes.Equal(sealed, want) {
					t.Fatalf("%s: %d-byte message sealed differently", backend, len(msg))
				}
				if opened, err := theirs.Open(nil, nonce, sealed, aad); err != nil || !bytes.Equal(opened, msg) {
					t.Fatalf("%s: Go cannot open ours", backend)
				}
				sealed[rng.IntN(len(sealed))] ^= 1 << rng.IntN(8)
				_, errOurs := ours.Open(nil, nonce, sealed, aad)
				_, errGo := theirs.Open(nil, nonce, sealed, aad)
				if errOurs == nil || errGo == nil {
					t.Fatalf("%s: a damaged message opened", backend)
				}
				ours.Close()
			}
		}
	}
}

// TestAEADContract checks what crypto/cipher.AEAD asks beyond the bytes: append semantics,
// exact aliasing allowed and inexact aliasing refused, nonce lengths, no plaintext on failure.
func TestAEADContract(t *testing.T) {
	for _, make_ := range []func([]byte) (cipher.AEAD, error){NewAESGCMSIV, NewAESGCM} {
		key := bytes.Repeat([]byte{7}, 32)
		aead, err := make_(key)
		if err != nil {
			t.Fatal(err)
		}
		if aead.NonceSize() != 12 || aead.Overhead() != 16 {
			t.Fatal("sizes")
		}
		nonce, msg, aad := make([]byte, 12), []byte("a message of some length"), []byte("ad")
		sealed := aead.Seal(nil, nonce, msg, aad)

		// Appends to dst.
		prefixed := aead.Seal([]byte("prefix"), nonce, msg, aad)
		if string(prefixed[:6]) != "prefix" || !bytes.Equal(prefixed[6:], sealed) {
			t.Fatal("Seal does not append")
		}
		opened, err := aead.Open([]byte("p:"), nonce, sealed, aad)
		if err != nil || string(opened) != "p:"+string(msg) {
			t.Fatal("Open does not append")
		}
		// In place: plaintext[:0] and ciphertext[:0].
		buffer := make([]byte, len(msg), len(msg)+16)
		copy(buffer, msg)
		inPlace := aead.Seal(buffer[:0], nonce, buffer, aad)
		if !bytes.Equal(inPlace, sealed) || &inPlace[0] != &buffer[0] {
			t.Fatal("in-place Seal")
		}
		plain, err := aead.Open(inPlace[:0], nonce, inPlace, aad)
		if err != nil || !bytes.Equal(plain, msg) {
			t.Fatal("in-place Open")
		}
		// Inexact overlap and wrong nonce lengths panic, as Go's GCM does.
		big := make([]byte, 200)
		mustPanic(t, "overlap", func() { aead.Seal(big[1:1], nonce, big[:len(msg)], aad) })
		mustPanic(t, "overlap", func() {
			s := append([]byte(nil), sealed...)
			aead.Open(s[2:2], nonce, s, aad)
		})
		mustPanic(t, "nonce length", func() { aead.Seal(nil, nonce[:11], msg, aad) })
		mustPanic(t, "nonce length", func() { aead.Open(nil, make([]byte, 13), sealed, aad) })
		// Associated data inside the output: read before it is written over.
		room := make([]byte, 0, 100)
		room = append(room, aad...)
		if got := aead.Seal(room[:0], nonce, msg, room[:len(aad)]); !bytes.Equal(got, sealed) {
			t.Fatal("Seal with its associated data in dst")
		}
		// Failure: an error, no plaintext, and dst's spare capacity zeroed.
		damaged := append([]byte(nil), sealed...)
		damaged[0] ^= 1
		dst := bytes.Repeat([]byte{0xa5}, 100)[:3]
		out, err := aead.Open(dst, nonce, damaged, aad)
		if out != nil || !errors.Is(err, ErrAuthentication) {
			t.Fatal("a damaged message opened")
		}
		if string(dst[:3]) != "\xa5\xa5\xa5" || !bytes.Equal(dst[3:3+len(msg)], make([]byte, len(msg))) {
			t.Fatal("dst's spare capacity not zeroed")
		}
		for _, short := range [][]byte{nil, {}, sealed[:15]} {
			if _, err := aead.Open(nil, nonce, short, aad); !errors.Is(err, ErrAuthentication) {
				t.Fatal("a message shorter than a tag")
			}
		}
		if empty := aead.Seal(nil, nonce, nil, nil); len(empty) != 16 {
			t.Fatal("empty message")
		}
	}
	for _, bad := range []int{0, 15, 24, 33} {
		if _, err := NewAESGCMSIV(make([]byte, bad)); !errors.Is(err, ErrKeySize) {
			t.Fatalf("a %d-byte key: %v", bad, err)
		}
		if _, err := NewAESGCM(make([]byte, bad)); !errors.Is(err, ErrKeySize) {
			t.Fatalf("a %d-byte key: %v", bad, err)
		}
	}
	if _, err := New(Algorithm(9), make([]byte, 16)); !errors.Is(err, ErrAlgorithm) {
		t.Fatal("unknown algorithm")
	}
	if _, err := NewWithBackend(AES128GCM, make([]byte, 16), "sparc"); !errors.Is(err, ErrBackend) {
		t.Fatal("unknown backend")
	}
	if !strings.Contains(ErrAuthentication.Error(), "not authentic") {
		t.Fatal(ErrAuthentication.Error())
	}
}

func mustPanic(t *testing.T, what string, f func()) {
	t.Helper()
	defer func() {
		if recover() == nil {
			t.Fatalf("no panic on %s", what)
		}
	}()
	f()
}

func TestBatches(t *testing.T) {
	c, err := New(AES256GCMSIV, bytes.Repeat([]byte{3}, 32))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var messages []Message
	for i := 0; i < 1000; i++ {
		nonce := make([]byte, 12)
		nonce[0], nonce[1] = byte(i), byte(i>>8)
		messages = append(messages, Message{Nonce: nonce, Data: bytes.Repeat([]byte{byte(i)}, i%70),
			AdditionalData: []byte(strings.Repeat("a", i%5))})
	}
	sealed, err := c.SealBatch(messages)
	if err != nil {
		t.Fatal(err)
	}
	opened := make([]Message, len(messages))
	for i, m := range messages {
		if !bytes.Equal(sealed[i], c.Seal(nil, m.Nonce, m.Data, m.AdditionalData)) {
			t.Fatalf("batch message %d sealed differently", i)
		}
		opened[i] = Message{Nonce: m.Nonce, Data: sealed[i], AdditionalData: m.AdditionalData}
	}
	opened[5].Data = append([]byte(nil), sealed[5]...)
	opened[5].Data[0] ^= 1
	opened[9].Data = opened[9].Data[:10]
	plaintexts, err := c.OpenBatch(opened)
	var batchErr *BatchError
	if !errors.As(err, &batchErr) || !errors.Is(err, ErrAuthentication) || len(batchErr.Failed) != 2 ||
		batchErr.Failed[0] != 5 || batchErr.Failed[1] != 9 {
		t.Fatalf("batch errors: %v", err)
	}
	for i, m := range messages {
		if i == 5 || i == 9 {
			if plaintexts[i] != nil {
				t.Fatal("a failed message has plaintext")
			}
		} else if !bytes.Equal(plaintexts[i], m.Data) {
			t.Fatalf("batch message %d opened wrong", i)
		}
	}
	if out, err := c.SealBatch(nil); err != nil || len(out) != 0 {
		t.Fatal("empty batch")
	}
	if _, err := c.SealBatch([]Message{{Nonce: make([]byte, 8)}}); !errors.Is(err, ErrNonceSize) {
		t.Fatal("batch nonce length")
	}
}

// TestGoroutinesShareACipher: many goroutines seal and open with one Cipher.
func TestGoroutinesShareACipher(t *testing.T) {
	c, err := NewAESGCMSIV(bytes.Repeat([]byte{5}, 16))
	if err != nil {
		t.Fatal(err)
	}
	nonce := make([]byte, 12)
	want := make([][]byte, 200)
	for i := range want {
		want[i] = c.Seal(nil, nonce, bytes.Repeat([]byte{byte(i)}, i), nil)
	}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range want {
				msg := bytes.Repeat([]byte{byte(i)}, i)
				if got := c.Seal(nil, nonce, msg, nil); !bytes.Equal(got, want[i]) {
					t.Error("concurrent seal")
					return
				}
				if got, err := c.Open(nil, nonce, want[i], nil); err != nil || !bytes.Equal(got, msg) {
					t.Error("concurrent open")
					return
				}
			}
		}()
	}
	wg.Wait()
}

func TestFiles(t *testing.T) {
	dir := t.TempDir()
	plain, sealed, opened := filepath.Join(dir, "p"), filepath.Join(dir, "s"), filepath.Join(dir, "o")
	data := bytes.Repeat([]byte("combsiv "), 50000)
	if err := os.WriteFile(plain, data, 0o600); err != nil {
		t.Fatal(err)
	}
	key := bytes.Repeat([]byte{9}, 32)
	if n, err := EncryptFile(plain, sealed, key, &FileOptions{ChunkSize: 4096}); err != nil || n != int64(len(data)) {
		t.Fatal(n, err)
	}
	if _, err := EncryptFile(plain, sealed, key, nil); !errors.Is(err, ErrExist) {
		t.Fatal("existing output", err)
	}
	if _, err := DecryptFile(sealed, opened, make([]byte, 32), nil); !errors.Is(err, ErrAuthentication) {
		t.Fatal("wrong key", err)
	}
	if _, err := os.Stat(opened); !os.IsNotExist(err) {
		t.Fatal("output left behind")
	}
	if _, err := DecryptFile(sealed, opened, key[:16], nil); !errors.Is(err, ErrKeySize) {
		t.Fatal("short key", err)
	}
	if n, err := DecryptFile(sealed, opened, key, nil); err != nil || n != int64(len(data)) {
		t.Fatal(n, err)
	}
	got, err := os.ReadFile(opened)
	if err != nil || !bytes.Equal(got, data) {
		t.Fatal("round trip")
	}
	if _, err := DecryptFile(plain, filepath.Join(dir, "x"), key, nil); !errors.Is(err, ErrFormat) {
		t.Fatal("not a combsiv file", err)
	}
}

// TestBatchAppend: the appending batch calls give the same bytes as the per-message calls,
// refuse a destination that overlaps a message, and zero the plaintext of a failed message.
func TestBatchAppend(t *testing.T) {
	c, err := New(AES128GCMSIV, bytes.Repeat([]byte{4}, 16))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	messages := []Message{
		{Nonce: make([]byte, 12), Data: []byte("first")},
		{Nonce: bytes.Repeat([]byte{1}, 12), Data: nil, AdditionalData: []byte("ad")},
		{Nonce: bytes.Repeat([]byte{2}, 12), Data: bytes.Repeat([]byte{9}, 100)},
	}
	var want []byte
	for _, m := range messages {
		want = c.Seal(want, m.Nonce, m.Data, m.AdditionalData)
	}
	sealed, err := c.SealBatchAppend([]byte("head"), messages, 1)
	if err != nil || string(sealed[:4]) != "head" || !bytes.Equal(sealed[4:], want) {
		t.Fatal("SealBatchAppend", err)
	}
	var opened []Message
	at := 4
	for _, m := range messages {
		n := len(m.Data) + TagSize
		opened = append(opened, Message{Nonce: m.Nonce, Data: sealed[at : at+n], AdditionalData: m.AdditionalData})
		at += n
	}
	opened[2].Data = append([]byte(nil), opened[2].Data...)
	opened[2].Data[5] ^= 1
	plain, err := c.OpenBatchAppend(nil, opened, 0)
	var batchErr *BatchError
	if !errors.As(err, &batchErr) || len(batchErr.Failed) != 1 || batchErr.Failed[0] != 2 {
		t.Fatal("OpenBatchAppend failures", err)
	}
	if string(plain[:5]) != "first" || !bytes.Equal(plain[5:], make([]byte, 100)) {
		t.Fatal("OpenBatchAppend output")
	}
	room := make([]byte, 0, 1000)
	room = append(room, "first"...)
	overlapping := []Message{{Nonce: make([]byte, 12), Data: room[:5]}}
	if _, err := c.SealBatchAppend(room[:0], overlapping, 0); !errors.Is(err, ErrOverlap) {
		t.Fatal("an overlapping destination", err)
	}
	if _, err := c.SealBatchAppend(nil, messages, -1); !errors.Is(err, ErrInvalidArgument) {
		t.Fatal("negative threads", err)
	}
}
