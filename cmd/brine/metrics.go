package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/common/expfmt"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/client"
)

// metricsFlags are the --metrics and --metrics-addr flags of import and bench: the client's
// OpenTelemetry metrics, through the Prometheus exporter, printed at the end or served while the
// command runs (both show the same registry).
type metricsFlags struct {
	print bool
	addr  string
}

func (m *metricsFlags) register(fs *flag.FlagSet) {
	fs.BoolVar(&m.print, "metrics", false, "print the client's metrics (Prometheus text format) to stdout when done")
	fs.StringVar(&m.addr, "metrics-addr", "", "serve the client's metrics at http://ADDR/metrics while the command runs, e.g. 127.0.0.1:9464")
}

// metricsRun is the metrics of one command run.
type metricsRun struct {
	opts []client.Option // what the command's clients are built with
	addr string          // the address served, when serving
	stop func(ctx context.Context) error
}

// start sets up the meter provider for a command on the store URL storeURL; with neither flag it
// returns a run that does nothing. The caller must call stop.
func (m *metricsFlags) start(env *cliEnv, storeURL string) (*metricsRun, error) {
	run := &metricsRun{stop: func(context.Context) error { return nil }}
	if !m.print && m.addr == "" {
		return run, nil
	}
	reg := prometheus.NewRegistry()
	exp, err := otelprom.New(otelprom.WithRegisterer(reg))
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(exp))
	system, address := storeAttributes(storeURL)
	run.opts = []client.Option{client.WithMeterProvider(mp), client.WithStoreAttributes(system, address)}

	var srv *http.Server
	served := make(chan error, 1)
	if m.addr != "" {
		ln, err := net.Listen("tcp", m.addr)
		if err != nil {
			_ = mp.Shutdown(context.Background())
			return nil, fmt.Errorf("--metrics-addr: %w", err)
		}
		mux := http.NewServeMux()
		mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
		srv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
		run.addr = ln.Addr().String()
		go func() { served <- srv.Serve(ln) }()
		fmt.Fprintf(env.stderr, "metrics: serving http://%s/metrics\n", run.addr)
	}
	run.stop = func(ctx context.Context) error {
		var errs []error
		if m.print {
			errs = append(errs, printMetrics(env, reg))
		}
		if srv != nil {
			errs = append(errs, srv.Shutdown(ctx))
			if err := <-served; !errors.Is(err, http.ErrServerClosed) {
				errs = append(errs, err)
			}
		}
		errs = append(errs, mp.Shutdown(ctx))
		return errors.Join(errs...)
	}
	return run, nil
}

// printMetrics writes every metric of reg to stdout in Prometheus' text format.
func printMetrics(env *cliEnv, reg *prometheus.Registry) error {
	families, err := reg.Gather()
	if err != nil {
		return fmt.Errorf("metrics: %w", err)
	}
	enc := expfmt.NewEncoder(env.stdout, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, f := range families {
		if err := enc.Encode(f); err != nil {
			return fmt.Errorf("metrics: %w", err)
		}
	}
	return nil
}

// storeAttributes names a store URL's system and server for db.system and server.address.
func storeAttributes(raw string) (system, address string) {
	scheme, rest, _ := strings.Cut(raw, "://")
	switch {
	case scheme == "hbase":
		quorum, _, _ := strings.Cut(rest, "/")
		return "hbase", quorum
	case strings.HasPrefix(scheme, "tablestore"):
		_, host, _ := strings.Cut(rest, "@")
		return "tablestore", host
	case scheme == "local":
		return "bbolt", ""
	default:
		return scheme, ""
	}
}

// newClient is client.New with the CLI's logger and the command's metrics options.
func (env *cliEnv) newClient(b backends.Backend) *client.Client {
	return client.New(b, append([]client.Option{client.WithLogger(env.logger)}, env.clientOptions...)...)
}

// clientOptionList is cliEnv's clientOptions: options every client of a command is built with.
type clientOptionList = []client.Option
