// Which figure each preset draws: kind → the function (one file per kind of
// figure) that draws it into a box from the engine's numbers.

import { barsRows, barsOne, cumulative, barsFour, barsPenalty } from "./bars.js";
import { sweep } from "./sweep.js";
import { entropyCurves, flopCurve, lossCurve } from "./curves.js";
import { triangle, flopBars } from "./kv.js";
import { cycleGraph, matrix } from "./graph.js";
import { beamTree } from "./tree.js";
import { gallery } from "./gallery.js";
import { kvSize } from "./kv-size.js";
import { diversity } from "./diversity.js";
import { answerForms } from "./answer-forms.js";

/** @type {Record<string, (box: HTMLElement, d: any, ctx: any) => any>} */
export const FIGURES = {
  "bars-rows": barsRows,
  "bars-one": barsOne,
  "cumulative": cumulative,
  "bars-four": barsFour,
  "bars-penalty": barsPenalty,
  "sweep": sweep,
  "entropy-curves": entropyCurves,
  "flop-curve": flopCurve,
  "loss-curve": lossCurve,
  "triangle": triangle,
  "flop-bars": flopBars,
  "cycle-graph": cycleGraph,
  "matrix": matrix,
  "beam-tree": beamTree,
  "gallery": gallery,
  "kv-size": kvSize,
  "diversity": diversity,
  "answer-forms": answerForms,
};
