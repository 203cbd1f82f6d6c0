// nvdp-config reads NVIDIA device plugin config files with the plugin's own config package
// (github.com/NVIDIA/k8s-device-plugin/api/config/v1), as the plugin reads --config-file, so
// that gpurack's device-plugin configs are checked by NVIDIA's code, not by our reading of it.
//
// Each file must unmarshal strictly into the plugin's Config type (no unknown field) and pass
// the plugin's NewConfig; each is then printed as one line of JSON, as the plugin holds it.
// Exit 0 when every file passes, 1 naming the first that does not, 2 for usage.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"

	spec "github.com/NVIDIA/k8s-device-plugin/api/config/v1"
	cli "github.com/urfave/cli/v2"
	"sigs.k8s.io/yaml"
)

var version = "dev"

func read(path string) (*spec.Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var strict spec.Config
	if err := yaml.UnmarshalStrict(data, &strict); err != nil {
		return nil, fmt.Errorf("not the device plugin's config: %v", err)
	}
	flags := []cli.Flag{&cli.StringFlag{Name: "config-file"}}
	set := flag.NewFlagSet("nvdp-config", flag.ContinueOnError)
	set.String("config-file", path, "")
	config, err := spec.NewConfig(cli.NewContext(cli.NewApp(), set, nil), flags)
	if err != nil {
		return nil, err
	}
	spec.DisableResourceNamingInConfig(config)
	return config, nil
}

func main() {
	if len(os.Args) < 2 || os.Args[1] == "-h" || os.Args[1] == "--help" {
		fmt.Fprintf(os.Stderr, "nvdp-config %s (device plugin config v1)\nusage: nvdp-config FILE...\n", version)
		os.Exit(2)
	}
	for _, path := range os.Args[1:] {
		config, err := read(path)
		if err != nil {
			fmt.Fprintf(os.Stderr, "nvdp-config: %s: %v\n", path, err)
			os.Exit(1)
		}
		line, err := json.Marshal(config)
		if err != nil {
			fmt.Fprintf(os.Stderr, "nvdp-config: %s: %v\n", path, err)
			os.Exit(1)
		}
		fmt.Println(string(line))
	}
}
