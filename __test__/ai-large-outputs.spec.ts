// Tool outputs near or over the window through real tool loops of ai v5 and ai v6 (Node 20).
import * as ai5 from 'ai'
import { MockLanguageModelV2 } from 'ai/test'
import * as ai6 from 'ai-v6'
import { MockLanguageModelV3 } from 'ai-v6/test'

import { largeOutputSuite } from './ai-large-outputs.js'

largeOutputSuite({ name: 'ai v5', ai: ai5, Mock: MockLanguageModelV2, spec: 'v2', Agent: ai5.Experimental_Agent as never })
largeOutputSuite({ name: 'ai v6', ai: ai6, Mock: MockLanguageModelV3, spec: 'v3', Agent: ai6.ToolLoopAgent as never })
