package main

import (
	"context"
	"log/slog"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/fx"

	"github.com/plantstore/plantstore/adapters/admin"
	"github.com/plantstore/plantstore/adapters/jwtauth"
	"github.com/plantstore/plantstore/adapters/postgres"
	"github.com/plantstore/plantstore/adapters/sqlite"
	"github.com/plantstore/plantstore/application"
)

// migrator applies a store's schema migrations.
type migrator interface {
	Migrate(ctx context.Context) error
}

// storeModule picks the store adapter from the database URL's scheme.
func storeModule(cfg *Config) fx.Option {
	if strings.HasPrefix(cfg.DatabaseURL, "sqlite:") {
		return sqliteModule
	}
	return postgresModule
}

// storePorts binds a store adapter to every port it serves.
var storePorts = []fx.Annotation{
	fx.As(new(application.PlantInserter)),
	fx.As(new(application.PlantFinder)),
	fx.As(new(application.PlantLister)),
	fx.As(new(application.PlantDeleter)),
	fx.As(new(admin.Pinger)),
	fx.As(new(migrator)),
}

var sqliteModule = fx.Module("sqlite",
	fx.Provide(fx.Annotate(openSQLite, storePorts...)),
)

func openSQLite(lc fx.Lifecycle, cfg *Config, reg prometheus.Registerer) (*sqlite.Store, error) {
	c := sqlite.Config{Path: strings.TrimPrefix(cfg.DatabaseURL, "sqlite:")}
	c.Batch.MaxBatch = cfg.BatchMaxSize
	c.Batch.MaxWait = cfg.BatchMaxWait
	s, err := sqlite.Open(context.Background(), c)
	if err != nil {
		return nil, err
	}
	lc.Append(fx.StopHook(s.Close))
	return s, prepareStore(s, cfg, s.RegisterMetrics, reg)
}

var postgresModule = fx.Module("postgres",
	fx.Provide(fx.Annotate(openPostgres, storePorts...)),
)

func openPostgres(lc fx.Lifecycle, cfg *Config, log *slog.Logger, reg prometheus.Registerer) (*postgres.Store, error) {
	c := postgres.Config{
		URL:             cfg.DatabaseURL,
		MaxOpenConns:    cfg.DBMaxOpenConns,
		MaxIdleConns:    cfg.DBMaxIdleConns,
		ConnMaxLifetime: cfg.DBConnLifetime,
		QueryTimeout:    cfg.DBQueryTimeout,
		ConnectTimeout:  cfg.DBStartupWait,
		Logger:          log,
	}
	c.Batch.MaxBatch = cfg.BatchMaxSize
	c.Batch.MaxWait = cfg.BatchMaxWait
	s, err := postgres.Open(context.Background(), c)
	if err != nil {
		return nil, err
	}
	lc.Append(fx.StopHook(s.Close))
	return s, prepareStore(s, cfg, s.RegisterMetrics, reg)
}

// prepareStore registers a store's metrics and, unless turned off, applies
// its migrations before the service takes traffic.
func prepareStore(m migrator, cfg *Config, register func(prometheus.Registerer) error, reg prometheus.Registerer) error {
	if err := register(reg); err != nil {
		return err
	}
	if cfg.Migrate {
		return m.Migrate(context.Background())
	}
	return nil
}

// authModule verifies bearer tokens with the configured keys.
var authModule = fx.Module("jwtauth",
	fx.Provide(fx.Annotate(openVerifier, fx.As(new(application.TokenVerifier)))),
)

func openVerifier(lc fx.Lifecycle, cfg *Config, log *slog.Logger, reg prometheus.Registerer) (*jwtauth.Verifier, error) {
	v, err := jwtauth.New(context.Background(), jwtauth.Config{
		SecretFile:    cfg.JWTSecretFile,
		PublicKeyFile: cfg.JWTPublicKeyFile,
		JWKSURL:       cfg.JWKSURL,
		JWKSRefresh:   cfg.JWKSRefresh,
		Issuer:        cfg.JWTIssuer,
		Audience:      cfg.JWTAudience,
	}, jwtauth.WithLogger(log), jwtauth.WithRegisterer(reg))
	if err != nil {
		return nil, err
	}
	lc.Append(fx.StopHook(v.Close))
	return v, nil
}
