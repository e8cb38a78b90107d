/** scripts/helm-render.mjs: the Go text/template + Sprig subset the chart uses, with Go's semantics. */
import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { goNumber, renderChart, toYaml } from '../../scripts/helm-render.mjs';

/** Render one template in a throwaway chart. */
function tpl(src: string, values: object = {}, extra: Record<string, string> = {}): string {
  const dir = mkdtempSync(join(tmpdir(), 'helm-render-'));
  mkdirSync(join(dir, 'templates'));
  writeFileSync(join(dir, 'Chart.yaml'), 'apiVersion: v2\nname: c\nversion: 1.2.3\nappVersion: "9"\n');
  writeFileSync(join(dir, 'values.yaml'), 'a: {b: x}\nn: 3000\nbig: 1000000\nlist: [p, q]\nm: {z: 1, y: 2}\nempty: ""\n');
  writeFileSync(join(dir, 'templates', 't.yaml'), src);
  for (const [f, s] of Object.entries(extra)) writeFileSync(join(dir, 'templates', f), s);
  return renderChart(dir, { values, name: 'rel', namespace: 'ns' }).get('c/templates/t.yaml')!;
}

describe('helm-render', () => {
  it('trims whitespace with {{- and -}}, and drops comments', () => {
    expect(tpl('a  \n  {{- "b" -}}  \n c{{/* no */}}d')).toBe('abcd');
    expect(tpl('{{- /* x */ -}}\n  k')).toBe('k');
  });

  it('reads fields, built-in objects, and prints missing keys as empty', () => {
    expect(tpl('{{ .Values.a.b }} {{ .Release.Name }}/{{ .Release.Namespace }} {{ .Chart.Version }} {{ .Values.nope }}|')).toBe('x rel/ns 1.2.3 |');
  });

  it('errors on a field of a missing value, as Go does', () => {
    expect(() => tpl('{{ .Values.nope.deeper }}')).toThrow(/nil pointer evaluating interface \{\}\.deeper/);
  });

  it('prints float64 values the way Go does', () => {
    expect(tpl('{{ .Values.n }} {{ .Values.big }} {{ .Values.n | quote }}')).toBe('3000 1e+06 "3000"');
    expect(goNumber(0.5)).toBe('0.5');
    expect(goNumber(0.00001)).toBe('1e-05');
  });

  it('if / else if / else, with, range over lists and maps (sorted keys), variables', () => {
    expect(tpl('{{ if .Values.empty }}1{{ else if .Values.list }}2{{ else }}3{{ end }}')).toBe('2');
    expect(tpl('{{ with .Values.a }}{{ .b }}{{ end }}{{ with .Values.empty }}no{{ else }}else{{ end }}')).toBe('xelse');
    expect(tpl('{{ range $i, $v := .Values.list }}{{ $i }}={{ $v }};{{ end }}{{ range $k, $v := .Values.m }}{{ $k }}{{ end }}')).toBe('0=p;1=q;yz');
    expect(tpl('{{ range .Values.nope }}{{ else }}none{{ end }}')).toBe('none');
    expect(tpl('{{ $x := "a" }}{{ if true }}{{ $x = "b" }}{{ end }}{{ $x }}{{ range .Values.list }}{{ $.Release.Name }}{{ end }}')).toBe('brelrel');
  });

  it('define / include / template, with pipelines and Sprig functions', () => {
    const helpers = { '_h.tpl': '{{- define "h.name" -}}{{ .Release.Name | upper }}-{{ .Chart.Name }}{{- end -}}' };
    expect(tpl('{{ include "h.name" . | lower | quote }} {{ template "h.name" . }}', {}, helpers)).toBe('"rel-c" REL-c');
    expect(tpl('k:{{ toYaml .Values.m | nindent 2 }}')).toBe('k:\n  y: 2\n  z: 1');
    expect(tpl('{{ printf "%s-%d" "a" 3 }} {{ default "d" .Values.empty }} {{ "abcdef" | trunc 3 }} {{ join "," .Values.list }}')).toBe('a-3 d abc p,q');
    expect(tpl('{{ $d := dict "k" "v" }}{{ $_ := set $d "j" "w" }}{{ hasKey $d "j" }} {{ ternary "y" "n" (eq "a" "a") }} {{ and 1 "" }}|{{ or "" "z" }}')).toBe('true y |z');
    expect(toYaml({ b: [1, 2], a: 'x' })).toBe('a: x\nb:\n- 1\n- 2');
  });

  it('fails and required stop rendering with Helm\'s message', () => {
    expect(() => tpl('{{ required "need x" .Values.empty }}')).toThrow(/execution error: need x/);
    expect(() => tpl('{{ fail "no" }}')).toThrow(/execution error: no/);
  });

  it('refuses what it does not implement instead of guessing', () => {
    expect(() => tpl('{{ lookup "v1" "Pod" "" "" }}')).toThrow(/function "lookup" not defined/);
    expect(() => tpl('{{ block "x" . }}{{ end }}')).toThrow(/not supported/);
    expect(() => tpl('{{ eq .Values.n 3000 }}')).toThrow(/numbers is not supported/);
    expect(() => tpl('{{ if true }}')).toThrow(/unexpected EOF/);
  });
});
