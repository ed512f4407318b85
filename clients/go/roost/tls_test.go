package roost

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
)

// writePKI writes into dir a CA (ca.pem), a server certificate for
// roost.internal and 127.0.0.1 (server.pem, server.key) and a client
// certificate (client.pem, client.key), made with crypto/x509.
func writePKI(t *testing.T, dir string) {
	t.Helper()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ca := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "roost test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(48 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	write := func(name, kind string, der []byte) {
		if err := os.WriteFile(filepath.Join(dir, name), pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("ca.pem", "CERTIFICATE", caDER)
	for i, name := range []string{"server", "client"} {
		key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		leaf := &x509.Certificate{SerialNumber: big.NewInt(int64(2 + i)), Subject: pkix.Name{CommonName: name + ".roost.internal"},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(48 * time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}}
		if name == "server" {
			leaf.DNSNames, leaf.IPAddresses = []string{"roost.internal"}, []net.IP{net.ParseIP("127.0.0.1")}
		}
		der, err := x509.CreateCertificate(rand.Reader, leaf, caCert, &key.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		keyDER, _ := x509.MarshalPKCS8PrivateKey(key)
		write(name+".pem", "CERTIFICATE", der)
		write(name+".key", "PRIVATE KEY", keyDER)
	}
}

// Mutual TLS from a layout file's "tls" (paths relative to the file) and a
// bearer token against servers with an access policy; without the token,
// with a wrong one, and in plaintext the calls are refused.
func TestTLSAndToken(t *testing.T) {
	c := newCluster(t)
	pki := filepath.Join(c.dir, "pki")
	os.Mkdir(pki, 0o755)
	writePKI(t, pki)
	const token = "s3cret-token"
	sum := sha256.Sum256([]byte(token))
	policy := filepath.Join(c.dir, "policy.json")
	os.WriteFile(policy, []byte(`{"clients": [{"name": "svc", "token_sha256": "`+hex.EncodeToString(sum[:])+`", "tables": ["users"]}]}`), 0o644)
	kvs := keysAndValues(50, "")
	c.build("users", kvs, 2)
	_, layout := c.startCluster(2, 1, "--tls-cert", filepath.Join(pki, "server.pem"), "--tls-key", filepath.Join(pki, "server.key"),
		"--tls-client-ca", filepath.Join(pki, "ca.pem"), "--access-policy", policy)
	path := filepath.Join(pki, "cluster.json")
	text := `{"shards": [["` + layout.Shards[0][0] + `"], ["` + layout.Shards[1][0] + `"]],
	  "tls": {"ca": "ca.pem", "cert": "client.pem", "key": "client.key", "server_name": "roost.internal"}}`
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var keys [][]byte
	for _, e := range kvs {
		keys = append(keys, e.key)
	}

	client, err := Open(path, Options{Token: token})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	r, err := client.MultiGet(ctx, "users", keys)
	if err != nil {
		t.Fatal(err)
	}
	if found, err := checkBatch(keys, r, valueMap(kvs)); err != nil || found != len(kvs) {
		t.Fatalf("%d found: %v", found, err)
	}
	if err := client.Wait(ctx, "users", "1", 0); err != nil {
		t.Fatal(err)
	}

	anonymous, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer anonymous.Close()
	_, err = anonymous.Get(ctx, "users", keys[0])
	wantCode(t, err, codes.PermissionDenied, "users")
	wrong, _ := Open(path, Options{Token: "wrong"})
	defer wrong.Close()
	_, err = wrong.Get(ctx, "users", keys[0])
	wantCode(t, err, codes.Unauthenticated, "")

	short, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	_, err = mustClient(t, layout, Options{Token: token}).Get(short, "users", keys[0]) // plaintext
	wantCode(t, err, codes.Unavailable, "shard ")

	// A server name the certificate does not hold.
	layout.TLS = &TLSConfig{CA: filepath.Join(pki, "ca.pem"), Cert: filepath.Join(pki, "client.pem"),
		Key: filepath.Join(pki, "client.key"), ServerName: "other.name"}
	short2, cancel2 := context.WithTimeout(ctx, 2*time.Second)
	defer cancel2()
	_, err = mustClient(t, layout, Options{Token: token}).Get(short2, "users", keys[0])
	if err == nil || !strings.Contains(err.Error(), "shard ") {
		t.Fatalf("a wrong server name: %v", err)
	}
}
