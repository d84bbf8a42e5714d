// The AI SDK integration in real tool loops of ai v7 (Node 22 or later: `npm test` runs this folder
// on Node 24). In v7 a prepareStep override carries forward across steps.
import * as ai7 from 'ai-v7'
import { MockLanguageModelV4 } from 'ai-v7/test'

import { integrationSuite } from '../ai-integration.js'

integrationSuite({ name: 'ai v7', ai: ai7, Mock: MockLanguageModelV4, spec: 'v3', Agent: ai7.ToolLoopAgent as never })
