// The page's settings table (www/state/settings.js) against the engine's
// definition it imports (www/state/engine-settings.js, which
// crate/tests/settings_table.rs proves is the engine's own): every engine
// control starts at the engine's default and accepts exactly the engine's
// range, every choice offers exactly the engine's names. No browser needed.
//
// Run alone: node --test tests/e2e/settings-table.test.mjs

import { test } from "node:test";
import assert from "node:assert/strict";
import {
  ENGINE, NUMBER_CONTROLS, CHOICE_CONTROLS, PAGE_DEFAULTS, checkNumber, makeDefaultSettings, toEngineSettings,
} from "../../www/state/settings.js";

test("every engine control has the engine's default and refuses just outside the engine's range", () => {
  for (const c of NUMBER_CONTROLS.filter((x) => !x.local)) {
    const r = ENGINE.numbers.find((n) => n.key === c.key);
    assert.ok(r, `the engine has a range for ${c.key}`);
    assert.equal(c.def, ENGINE.defaults[c.key], `${c.key} default`);
    const step = r.integer ? 1 : 1e-9 * Math.max(1, Math.abs(r.max));
    if (r.max_excluded) {
      assert.notEqual(checkNumber(c, r.max), null, `${c.key} = excluded max`);
      assert.equal(checkNumber(c, r.max - step), null, `${c.key} just below max`);
    } else {
      assert.equal(checkNumber(c, r.max), null, `${c.key} = max ${r.max}`);
    }
    assert.notEqual(checkNumber(c, r.max + step), null, `${c.key} above max`);
    if (r.min_excluded) {
      assert.notEqual(checkNumber(c, r.min), null, `${c.key} = excluded min`);
      assert.equal(checkNumber(c, r.min + step), null, `${c.key} just above min`);
    } else {
      assert.equal(checkNumber(c, r.min), null, `${c.key} = min`);
      assert.notEqual(checkNumber(c, r.min - step), null, `${c.key} below min`);
    }
    if (r.smallest_positive !== null) {
      assert.equal(checkNumber(c, r.smallest_positive), null);
      assert.notEqual(checkNumber(c, r.smallest_positive / 2), null, `${c.key} in the gap above 0`);
    }
    if (r.integer) assert.notEqual(checkNumber(c, r.min + 0.5), null, `${c.key} is whole`);
  }
});

test("every choice offers the engine's names and starts at the engine's default", () => {
  for (const c of CHOICE_CONTROLS) {
    const e = ENGINE.choices.find((x) => x.key === c.key);
    assert.deepEqual(c.options.map((o) => o[0]), e.options, c.key);
    assert.equal(c.def, ENGINE.defaults[c.key], c.key);
  }
});

test("the settings the page sends start as the engine's defaults, but for the page's own", () => {
  const sent = toEngineSettings(makeDefaultSettings());
  for (const [key, value] of Object.entries(sent)) {
    assert.ok(key in ENGINE.defaults, `${key} is an engine setting`);
    assert.deepEqual(value, key in PAGE_DEFAULTS ? PAGE_DEFAULTS[key] : ENGINE.defaults[key], key);
  }
});

test("every numeric engine setting has a control (the per-item ranges of biases and the report's top_n aside)", () => {
  const page = new Set(NUMBER_CONTROLS.map((c) => c.key));
  const perItem = new Set(["logit_bias", "sequence_bias", "top_n"]);
  const missing = ENGINE.numbers.map((n) => n.key).filter((k) => !perItem.has(k) && !page.has(k));
  assert.deepEqual(missing, [], "engine settings without a control");
});
