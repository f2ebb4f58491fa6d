// Package deploy runs sandox's deployment recipes as a user would:
// compose.yaml under Docker Compose (TestCompose), and the multi-host
// recipe of docs/deploy.md, its commands taken from the markdown
// (TestJoinRecipe). It is its own package so that its tests run one at a
// time, apart from the large integration package, under names of their
// own: nothing here touches `sandox up`'s containers.
package deploy
