#!/usr/bin/env node
// The `dispatch` operator CLI: loads the TypeScript sources through tsx (no build step).
import { register } from 'tsx/esm/api'

register()
const { main } = await import('../src/cli.ts')
main()
