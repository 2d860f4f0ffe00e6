package main

import (
	"io"
	"reflect"

	"go.uber.org/fx"

	"github.com/plantstore/plantstore/cmd/plantstore/internal/settings"
)

// config is the settings of every module of the service. Each module
// declares its own settings type in its file, with a tag per setting; a
// field here adds a module's settings to the flags, the variables, --help,
// the start-up line and `plantstore settings`, in this order.
type config struct {
	API      apiSettings
	Admin    adminSettings
	Store    storeSettings
	Postgres postgresSettings
	Auth     authSettings
	Scopes   scopeSettings
	Webhook  webhookSettings
	Feed     feedSettings
	HTTP     httpSettings
	Core     coreSettings
}

// envPrefix starts the name of every setting's variable.
const envPrefix = "PLANTSTORE_"

// loadConfig reads every setting from its default, then the environment,
// then args, which win. The first bad value is the error: one line naming
// the setting. Serve checks more than each value (prepare); the commands
// that only open the store read the settings that they use (storeAccess).
func loadConfig(command string, args []string, getenv func(string) (string, bool), usage io.Writer) (*config, error) {
	c := &config{}
	if err := c.settings().Load(command, args, getenv, usage); err != nil {
		return nil, err
	}
	return c, nil
}

// storeAccess are the settings of the commands that open the store and do
// nothing else with the service's settings (migrate, webhooks list and
// redeliver): where the store is and how to reach it. Every other setting
// keeps its default for them, whatever the environment says.
var storeAccess = []string{"database-url", "database-pooler", "db-startup-wait", "db-query-timeout"}

// settings binds the fields of every module's settings.
func (c *config) settings() *settings.Set {
	return settings.New(envPrefix, c.modules()...)
}

// supply hands every module's settings to fx, each as its own type, so that
// a module's constructors take *theirSettings.
func (c *config) supply() fx.Option {
	var opts []fx.Option
	for _, m := range c.modules() {
		opts = append(opts, fx.Supply(m))
	}
	return fx.Options(opts...)
}

// modules returns a pointer to each module's settings struct.
func (c *config) modules() []any {
	v := reflect.ValueOf(c).Elem()
	out := make([]any, v.NumField())
	for i := range out {
		out[i] = v.Field(i).Addr().Interface()
	}
	return out
}
