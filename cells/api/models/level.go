package models

// Level is the health level of a module or health scope in GET /v1/hive.
// Its values are those of the agent's health tree.
type Level string

// The health levels, from least to most telling.
const (
	LevelUnknown  Level = "Unknown"
	LevelStopped  Level = "Stopped"
	LevelOK       Level = "OK"
	LevelDegraded Level = "Degraded"
)
