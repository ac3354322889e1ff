package remote

import (
	"archive/zip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// fileSum is a file's sha256 in hex, as sha256sum prints it.
func fileSum(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// zipPackage wraps the pinned binary at bin in the zip hashi-up uploads
// (--package takes a release zip), cached in dir by the binary's sum.
func zipPackage(bin, dir string) (string, error) {
	sum, err := fileSum(bin)
	if err != nil {
		return "", err
	}
	name := filepath.Base(bin)
	out := filepath.Join(dir, fmt.Sprintf("%s-%s.zip", name, sum[:12]))
	if _, err := os.Stat(out); err == nil {
		return out, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	tmp, err := os.CreateTemp(dir, name+"-*.zip.tmp")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name())
	in, err := os.Open(bin)
	if err != nil {
		return "", err
	}
	defer in.Close()
	zw := zip.NewWriter(tmp)
	hdr := &zip.FileHeader{Name: name, Method: zip.Deflate}
	hdr.SetMode(0o755)
	w, err := zw.CreateHeader(hdr)
	if err == nil {
		_, err = io.Copy(w, in)
	}
	if err == nil {
		err = zw.Close()
	}
	if err == nil {
		err = tmp.Close()
	}
	if err != nil {
		return "", err
	}
	return out, os.Rename(tmp.Name(), out)
}
