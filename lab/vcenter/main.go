// Command vcsim-gpu is the lab's vCenter: govmomi's simulator with NVIDIA GPUs, vGPU rules and lab endpoints.
package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"flag"
	"fmt"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/vmware/govmomi/simulator"

	"vcsim/about"
	"vcsim/catalog"
	"vcsim/hostd"
	"vcsim/topology"
)

type options struct {
	listen, topology, catalog, username, password, cert, key, readyFile, depotDir string
	esxiUsername, esxiPassword                                                    string
}

func main() {
	log.SetFlags(log.LstdFlags | log.Lmicroseconds)
	log.SetPrefix("vcsim-gpu: ")
	var o options
	flag.StringVar(&o.listen, "listen", "127.0.0.1:8989", "address to serve on (port 0 picks a free port)")
	flag.StringVar(&o.topology, "topology", "", "topology JSON file (required)")
	flag.StringVar(&o.catalog, "catalog", "", "GPU catalog JSON file (required)")
	flag.StringVar(&o.username, "username", "", "the user SessionManager.Login accepts (required)")
	flag.StringVar(&o.password, "password", "", "that user's password (required)")
	flag.StringVar(&o.cert, "cert", "", "TLS certificate PEM (with -key; default: a self-signed certificate)")
	flag.StringVar(&o.key, "key", "", "TLS private key PEM")
	flag.StringVar(&o.readyFile, "ready-file", "", "write the SDK URL to this file once serving")
	flag.StringVar(&o.depotDir, "depot-dir", "", "serve the files of this directory at /lab/depot/ (offline bundles)")
	flag.StringVar(&o.esxiUsername, "esxi-username", "root", "the hosts' own account, for the host view (hostd)")
	flag.StringVar(&o.esxiPassword, "esxi-password", "", "that account's password (without it the host view refuses logins)")
	flag.Parse()
	if err := run(o); err != nil {
		log.Print(err)
		os.Exit(1)
	}
}

func (o options) check() error {
	switch {
	case flag.NArg() > 0:
		return fmt.Errorf("unexpected arguments: %v", flag.Args())
	case o.topology == "" || o.catalog == "":
		return errors.New("-topology and -catalog are required")
	case o.username == "" || o.password == "":
		return errors.New("-username and -password are required")
	case (o.cert == "") != (o.key == ""):
		return errors.New("-cert and -key go together")
	}
	return nil
}

func run(o options) error {
	if err := o.check(); err != nil {
		return err
	}
	started := time.Now()
	models, err := catalog.Load(o.catalog)
	if err != nil {
		return err
	}
	topo, err := topology.Load(o.topology, models)
	if err != nil {
		return err
	}
	tlsConfig, err := loadTLS(o.cert, o.key)
	if err != nil {
		return err
	}
	dataDir, err := os.MkdirTemp(scratchDir(), "vcsim-gpu-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dataDir)

	ln, err := net.Listen("tcp", o.listen)
	if err != nil {
		return err
	}
	sdk := &url.URL{Scheme: "https", Host: ln.Addr().String(), Path: "/sdk"}
	// build makes the topology's vCenter, at start and again at every reset (POST /lab/reset).
	build := func() (*Lab, *simulator.Service, error) {
		if err := emptyDir(dataDir); err != nil {
			return nil, nil, err
		}
		l, svc, err := NewSimulator(models, topo, dataDir)
		if err != nil {
			return nil, nil, err
		}
		l.vlcm.Configure(o.depotDir, tlsConfig) // depot downloads trust the lab's own certificate
		l.hostdLogin = hostd.Login{ESXiUsername: o.esxiUsername, ESXiPassword: o.esxiPassword,
			VCenterUsername: o.username, VCenterPassword: o.password}
		svc.Listen = &url.URL{Scheme: sdk.Scheme, Host: sdk.Host, Path: sdk.Path,
			User: url.UserPassword(o.username, o.password)}
		simulator.Map.SessionManager().ServiceHostName = sdk.Host
		return l, svc, nil
	}
	labs, err := newLabServer(build)
	if err != nil {
		return err
	}
	l := labs.lab
	server := &http.Server{
		Handler:           labs,
		TLSConfig:         tlsConfig,
		TLSNextProto:      map[string]func(*http.Server, *tls.Conn, http.Handler){}, // HTTP/1.1 only, as vCenter's SDK
		ReadHeaderTimeout: 30 * time.Second,
		ErrorLog:          log.New(os.Stderr, "vcsim-gpu: http: ", log.LstdFlags),
	}
	served := make(chan error, 1)
	go func() { served <- server.ServeTLS(ln, "", "") }()

	log.Printf("serving %s: %d datacenters, %d clusters, %d hosts, %d GPUs, %d VMs (ready in %s)", sdk,
		len(l.datacenters), len(l.clusters), len(l.hosts), countGPUs(l), len(l.vms),
		time.Since(started).Round(time.Millisecond))
	if o.readyFile != "" {
		if err := writeReadyFile(o.readyFile, sdk.String()); err != nil {
			return err
		}
	}

	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT)
	select {
	case sig := <-signals:
		log.Printf("%s: stopping", sig)
	case err := <-served:
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if err := server.Shutdown(ctx); err != nil {
		_ = server.Close() // property collector waits may still be open
	}
	log.Print("stopped")
	return nil
}

// NewSimulator builds the vCenter of a topology: an empty simulator model, filled with exactly the topology.
func NewSimulator(models *catalog.Catalog, topo *topology.Topology, dataDir string) (*Lab, *simulator.Service, error) {
	model := simulator.VPX()
	model.Datacenter, model.Portgroup, model.Host, model.Cluster, model.ClusterHost = 0, 0, 0, 0, 0
	model.Datastore, model.Machine, model.Autostart = 0, 0, false
	model.ServiceContent.About = about.VCenter(model.ServiceContent.About)
	if err := model.Create(); err != nil {
		return nil, nil, err
	}
	l := NewLab(models)
	if err := l.Build(model, topo, dataDir); err != nil {
		return nil, nil, err
	}
	svc := model.Service
	svc.RegisterSDK(simulator.Map)
	return l, svc, nil
}

// scratchDir is where the datastores' files go: memory-backed /dev/shm when there is one (a VM's files are a few
// empty files, and creating them on disk dominates the start-up time of large topologies).
func scratchDir() string {
	if info, err := os.Stat("/dev/shm"); err == nil && info.IsDir() && syscall.Access("/dev/shm", 2 /* W_OK */) == nil {
		return "/dev/shm"
	}
	return os.TempDir()
}

// emptyDir removes what dir holds (the datastores' files of the lab a reset replaces).
func emptyDir(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, entry := range entries {
		if err := os.RemoveAll(filepath.Join(dir, entry.Name())); err != nil {
			return err
		}
	}
	return nil
}

func countGPUs(l *Lab) int {
	n := 0
	for _, h := range l.hosts {
		n += len(h.GPUs)
	}
	return n
}

func writeReadyFile(path, content string) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".ready-")
	if err != nil {
		return err
	}
	if _, err := tmp.WriteString(content + "\n"); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// loadTLS reads the certificate pair, or makes a self-signed certificate for 127.0.0.1 and localhost.
func loadTLS(certFile, keyFile string) (*tls.Config, error) {
	var cert tls.Certificate
	var err error
	if certFile != "" {
		cert, err = tls.LoadX509KeyPair(certFile, keyFile)
	} else {
		cert, err = selfSigned()
	}
	if err != nil {
		return nil, fmt.Errorf("TLS certificate: %v", err)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}

func selfSigned() (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	template := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: "127.0.0.1", Organization: []string{"gpuops lab"}},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(30 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		DNSNames:     []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, template, template, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}
