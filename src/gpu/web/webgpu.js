// The GPU layer's WebGPU in the WebAssembly build: the subset of the webgpu.h C API that
// src/gpu/webgpu_api.h declares, implemented over the JavaScript WebGPU API (navigator.gpu in a
// browser, or the object given as Module.gpu, e.g. the `webgpu` package's create() under Node.js).
// The C++ GPU layer above it is the same code as in the native build.
//
// - Handles are small integers indexing WGX.objects; 0 is null.
// - Struct offsets come from wgx_gpu_web_layout() (gpu/web/layout.cpp), never from numbers here.
// - Futures: each asynchronous call returns an id; its promise settles into a pending callback,
//   delivered (the C function called) inside wgpuInstanceWaitAny or wgpuInstanceProcessEvents,
//   never from a JavaScript task while C++ is suspended. A wait that must block suspends the
//   WebAssembly stack with Asyncify until one of its promises settles.
// - Mapped ranges live in JavaScript memory: GetMappedRange hands C++ a malloc'd copy, and Unmap
//   copies a writable one back.

mergeInto(LibraryManager.library, {
  $WGX__deps: ['$getWasmTableEntry'],
  $WGX: {
    objects: [null],
    free: [],
    futures: null,  // id -> {info, promise, deliver}; Maps are made in wgpuCreateInstance (a
    devices: null,  // library object's fields must be plain data); handle -> {device, errors, ...}
    nextFuture: 1,
    L: null,
    gpu: null,

    layout: function() {
      if (!WGX.L) WGX.L = JSON.parse(UTF8ToString(_wgx_gpu_web_layout()));
      return WGX.L;
    },
    add: function(object) {
      var h = WGX.free.length ? WGX.free.pop() : WGX.objects.length;
      WGX.objects[h] = object;
      return h;
    },
    get: function(h) { return WGX.objects[h]; },
    release: function(h) {
      if (h && WGX.objects[h] !== undefined) {
        WGX.objects[h] = undefined;
        WGX.free.push(h);
      }
    },

    u32: function(p) { return HEAPU32[p >> 2]; },
    u64: function(p) { return HEAPU32[p >> 2] + HEAPU32[(p + 4) >> 2] * 4294967296; },
    f64: function(p) { return HEAPF64[p >> 3]; },
    setU32: function(p, v) { HEAPU32[p >> 2] = v >>> 0; },
    setU64: function(p, v) {
      HEAPU32[p >> 2] = v % 4294967296;
      HEAPU32[(p + 4) >> 2] = Math.floor(v / 4294967296);
    },
    // A WGPUStringView at p; `undefined` for a null view.
    str: function(p) {
      var L = WGX.layout();
      var data = WGX.u32(p + L['WGPUStringView.data']);
      var length = WGX.u32(p + L['WGPUStringView.length']);
      if (!data) return undefined;
      return length === 0xFFFFFFFF ? UTF8ToString(data) : UTF8ToString(data, length);
    },
    // Writes a WGPUStringView of a malloc'd copy of `text` at p (the C side frees it, or WGX does).
    setStr: function(p, text) {
      var L = WGX.layout();
      text = text || '';
      var bytes = lengthBytesUTF8(text);
      var data = _malloc(bytes + 1);
      stringToUTF8(text, data, bytes + 1);
      WGX.setU32(p + L['WGPUStringView.data'], data);
      WGX.setU32(p + L['WGPUStringView.length'], bytes);
      return data;
    },
    // Calls `fn(view)` with a temporary WGPUStringView of `text`, freed afterwards.
    withStr: function(text, fn) {
      var view = _malloc(WGX.layout()['WGPUStringView']);
      var data = WGX.setStr(view, text);
      try {
        return fn(view);
      } finally {
        _free(data);
        _free(view);
      }
    },
    label: function(descriptor, field) {
      return descriptor ? WGX.str(descriptor + WGX.layout()[field]) : undefined;
    },
    // A *CallbackInfo read at call time (the struct is a temporary of the caller).
    // The JavaScript descriptor of a WGPUComputePipelineDescriptor at `desc`.
    computePipelineDescriptor: function(desc) {
      var L = WGX.layout();
      var c = desc + L['WGPUComputePipelineDescriptor.compute'];
      var constants = {};
      var count = WGX.u32(c + L['WGPUComputeState.constantCount']);
      var list = WGX.u32(c + L['WGPUComputeState.constants']);
      for (var i = 0; i < count; i++) {
        var e = list + i * L['WGPUConstantEntry'];
        constants[WGX.str(e + L['WGPUConstantEntry.key'])] = WGX.f64(e + L['WGPUConstantEntry.value']);
      }
      return {
        label: WGX.label(desc, 'WGPUComputePipelineDescriptor.label'),
        layout: WGX.get(WGX.u32(desc + L['WGPUComputePipelineDescriptor.layout'])),
        compute: {
          module: WGX.get(WGX.u32(c + L['WGPUComputeState.module'])),
          entryPoint: WGX.str(c + L['WGPUComputeState.entryPoint']),
          constants: constants,
        },
      };
    },
    callbackInfo: function(p) {
      var L = WGX.layout();
      return {
        mode: WGX.u32(p + L['WGPUBufferMapCallbackInfo.mode']),
        callback: WGX.u32(p + L['WGPUBufferMapCallbackInfo.callback']),
        userdata1: WGX.u32(p + L['WGPUBufferMapCallbackInfo.userdata1']),
        userdata2: WGX.u32(p + L['WGPUBufferMapCallbackInfo.userdata2']),
      };
    },
    // Calls a future's C callback: `leading` arguments, then `message` as a temporary
    // WGPUStringView, then its userdata.
    reply: function(info, leading, message) {
      WGX.withStr(message, function(view) {
        WGX.call.apply(null, [info.callback].concat(leading, [view, info.userdata1, info.userdata2]));
      });
    },
    text: function(e) { return String(e && e.message || e); },
    call: function(fnPtr) {
      var args = Array.prototype.slice.call(arguments, 1);
      return getWasmTableEntry(fnPtr).apply(null, args);
    },

    // A future whose promise settles into `deliver`, a function that calls the C callback.
    future: function(info, promise) {
      var id = WGX.nextFuture++;
      var f = {info: info, deliver: null, delivered: false};
      f.promise = promise.then(function(deliver) { f.deliver = deliver; },
                               function(e) { f.deliver = function() { throw e; }; });
      WGX.futures.set(id, f);
      return BigInt(id);
    },
    // Runs the callbacks of settled futures among `ids` (all settled ones where ids is null) whose
    // mode allows it now; returns the ids that completed.
    deliver: function(ids, waitAny) {
      var done = [];
      var list = ids || Array.from(WGX.futures.keys());
      for (var i = 0; i < list.length; i++) {
        var id = list[i];
        var f = WGX.futures.get(id);
        if (!f) {
          if (ids) done.push(id);  // delivered before: complete
          continue;
        }
        if (!f.deliver) continue;
        if (!waitAny && f.info.mode === 1) continue;  // WaitAnyOnly
        WGX.futures.delete(id);
        done.push(id);
        f.deliver();
      }
      return done;
    },
    // Device-level events (uncaptured errors, loss), delivered when the instance is polled.
    deviceEvents: function() {
      WGX.devices.forEach(function(d, h) {
        // Both callbacks take a pointer to the device's handle first.
        var handle = _malloc(4);
        WGX.setU32(handle, h);
        while (d.errors.length) {
          var e = d.errors.shift();
          if (d.uncaptured.callback) WGX.reply(d.uncaptured, [handle, e.type], e.message);
        }
        if (d.lostInfo && !d.lostDelivered) {
          d.lostDelivered = true;
          if (d.lostCallback.callback) WGX.reply(d.lostCallback, [handle, d.lostInfo.reason], d.lostInfo.message);
        }
        _free(handle);
      });
    },
    errorType: function(error) {
      if (!error) return 1;  // NoError
      var name = error.constructor && error.constructor.name;
      if (name === 'GPUValidationError') return 2;
      if (name === 'GPUOutOfMemoryError') return 3;
      if (name === 'GPUInternalError') return 4;
      return 5;
    },
    // Runs a create call; a JavaScript exception (which native Dawn would report as an error)
    // becomes the error of the innermost error scope, or an uncaptured error.
    guard: function(deviceHandle, fn) {
      try {
        return fn();
      } catch (e) {
        var d = WGX.devices.get(deviceHandle);
        var error = {type: e instanceof RangeError ? 3 : 2, message: String(e && e.message || e)};
        if (d && d.scopes.length) {
          var top = d.scopes[d.scopes.length - 1];
          if (!top.synthetic) top.synthetic = error;
        } else if (d) {
          d.errors.push(error);
        }
        return null;
      }
    },
    // A uint64 size argument (a BigInt): undefined for WGPU_WHOLE_SIZE.
    size64: function(v) {
      return v == -1 || BigInt.asUintN(64, v) == BigInt.asUintN(64, BigInt(-1)) ? undefined : Number(v);
    },
    featureNames: {3: 'timestamp-query', 10: 'shader-f16', 17: 'subgroups'},
    limitsOut: function(limits, p) {
      var L = WGX.layout();
      for (var key in L) {
        if (key.lastIndexOf('WGPULimits.', 0) !== 0) continue;
        var name = key.substring(11);
        var v = limits[name];
        if (typeof v !== 'number') v = 0;
        if (L[key][1] === 8) WGX.setU64(p + L[key][0], v); else WGX.setU32(p + L[key][0], v);
      }
    },
    limitsIn: function(p, available) {
      var L = WGX.layout();
      var out = {};
      for (var key in L) {
        if (key.lastIndexOf('WGPULimits.', 0) !== 0) continue;
        var name = key.substring(11);
        if (typeof available[name] !== 'number') continue;  // a limit this WebGPU does not know
        out[name] = L[key][1] === 8 ? WGX.u64(p + L[key][0]) : WGX.u32(p + L[key][0]);
      }
      return out;
    },
  },

  // ---- Instance ----------------------------------------------------------------------------
  wgpuGetInstanceCapabilities__deps: ['$WGX'],
  wgpuGetInstanceCapabilities: function(caps) {
    var L = WGX.layout();
    WGX.setU32(caps + L['WGPUInstanceCapabilities.timedWaitAnyEnable'], 1);
    WGX.setU32(caps + L['WGPUInstanceCapabilities.timedWaitAnyMaxCount'], 64);
    return 1;
  },
  wgpuCreateInstance__deps: ['$WGX'],
  wgpuCreateInstance: function(desc) {
    WGX.gpu = Module['gpu'] || (typeof navigator !== 'undefined' && navigator.gpu) || null;
    if (!WGX.gpu) return 0;
    if (!WGX.futures) {
      WGX.futures = new Map();
      WGX.devices = new Map();
    }
    return WGX.add({instance: true});
  },
  wgpuInstanceRequestAdapter__deps: ['$WGX'],
  wgpuInstanceRequestAdapter: function(instance, options, callbackInfo) {
    var L = WGX.layout();
    var info = WGX.callbackInfo(callbackInfo);
    var opts = {};
    if (options) {
      var pref = WGX.u32(options + L['WGPURequestAdapterOptions.powerPreference']);
      if (pref === 1) opts.powerPreference = 'low-power';
      if (pref === 2) opts.powerPreference = 'high-performance';
      if (WGX.u32(options + L['WGPURequestAdapterOptions.featureLevel']) === 1) opts.featureLevel = 'compatibility';
    }
    var promise = WGX.gpu.requestAdapter(opts).then(function(adapter) {
      return function() {
        var h = adapter ? WGX.add(adapter) : 0;
        WGX.reply(info, [adapter ? 1 : 3, h], adapter ? '' : 'no WebGPU adapter');
      };
    }, function(e) {
      return function() {
        WGX.reply(info, [4, 0], WGX.text(e));
      };
    });
    return WGX.future(info, promise);
  },
  wgpuInstanceWaitAny__deps: ['$WGX', '$Asyncify'],
  wgpuInstanceWaitAny: function(instance, count, futures, timeoutNS) {
    var L = WGX.layout();
    var stride = L['WGPUFutureWaitInfo'];
    var ids = [];
    for (var i = 0; i < count; i++) ids.push(WGX.u64(futures + i * stride + L['WGPUFutureWaitInfo.future']));
    var mark = function(done) {
      for (var j = 0; j < count; j++) {
        if (done.indexOf(ids[j]) >= 0) WGX.setU32(futures + j * stride + L['WGPUFutureWaitInfo.completed'], 1);
      }
      return done.length ? 1 : 2;  // Success : TimedOut
    };
    if (Asyncify.state === Asyncify.State.Normal) {
      var done = WGX.deliver(ids, true);
      if (done.length || timeoutNS == 0) return mark(done);
      var promises = ids.map(function(id) {
        var f = WGX.futures.get(id);
        return f ? f.promise : Promise.resolve();
      });
      Asyncify.handleSleep(function(wakeUp) {
        Promise.race(promises).then(function() { wakeUp(0); });
      });
      if (Asyncify.state !== Asyncify.State.Normal) return 0;  // suspending; resumed below
      return mark(WGX.deliver(ids, true));
    }
    Asyncify.handleSleep(function() {});  // resuming: completes the rewind
    WGX.deviceEvents();
    return mark(WGX.deliver(ids, true));
  },
  wgpuInstanceProcessEvents__deps: ['$WGX'],
  wgpuInstanceProcessEvents: function(instance) {
    WGX.deliver(null, false);
    WGX.deviceEvents();
  },
  wgpuInstanceRelease__deps: ['$WGX'],
  wgpuInstanceRelease: function(h) { WGX.release(h); },

  // ---- Adapter -----------------------------------------------------------------------------
  wgpuAdapterGetInfo__deps: ['$WGX'],
  wgpuAdapterGetInfo: function(h, out) {
    var L = WGX.layout();
    var adapter = WGX.get(h);
    var info = adapter.info || {};
    WGX.setStr(out + L['WGPUAdapterInfo.vendor'], info.vendor);
    WGX.setStr(out + L['WGPUAdapterInfo.architecture'], info.architecture);
    // Browsers may leave the device name empty (privacy): the vendor and architecture then name it.
    WGX.setStr(out + L['WGPUAdapterInfo.device'], info.device || [info.vendor, info.architecture].filter(Boolean).join(' '));
    WGX.setStr(out + L['WGPUAdapterInfo.description'], info.description);
    var text = [info.vendor, info.device, info.description].join(' ').toLowerCase();
    var cpu = info.isFallbackAdapter || adapter.isFallbackAdapter || text.indexOf('swiftshader') >= 0;
    WGX.setU32(out + L['WGPUAdapterInfo.backendType'], 2);  // WebGPU
    WGX.setU32(out + L['WGPUAdapterInfo.adapterType'], cpu ? 3 : 4);  // CPU : Unknown
    WGX.setU32(out + L['WGPUAdapterInfo.vendorID'], 0);
    WGX.setU32(out + L['WGPUAdapterInfo.deviceID'], 0);
    WGX.setU32(out + L['WGPUAdapterInfo.subgroupMinSize'], info.subgroupMinSize || 0);
    WGX.setU32(out + L['WGPUAdapterInfo.subgroupMaxSize'], info.subgroupMaxSize || 0);
    return 1;
  },
  wgpuAdapterInfoFreeMembers__deps: ['$WGX'],
  wgpuAdapterInfoFreeMembers: function(info) {
    var L = WGX.layout();
    ['vendor', 'architecture', 'device', 'description'].forEach(function(f) {
      _free(WGX.u32(info + L['WGPUAdapterInfo.' + f] + L['WGPUStringView.data']));
    });
  },
  wgpuAdapterGetLimits__deps: ['$WGX'],
  wgpuAdapterGetLimits: function(h, out) {
    WGX.limitsOut(WGX.get(h).limits, out);
    return 1;
  },
  wgpuAdapterHasFeature__deps: ['$WGX'],
  wgpuAdapterHasFeature: function(h, feature) {
    var name = WGX.featureNames[feature];
    return name && WGX.get(h).features.has(name) ? 1 : 0;
  },
  wgpuAdapterGetFeatures__deps: ['$WGX'],
  wgpuAdapterGetFeatures: function(h, out) {
    var L = WGX.layout();
    var adapter = WGX.get(h);
    var list = [];
    for (var code in WGX.featureNames) {
      if (adapter.features.has(WGX.featureNames[code])) list.push(Number(code));
    }
    var array = _malloc(4 * Math.max(1, list.length));
    list.forEach(function(code, i) { WGX.setU32(array + 4 * i, code); });
    WGX.setU32(out + L['WGPUSupportedFeatures.featureCount'], list.length);
    WGX.setU32(out + L['WGPUSupportedFeatures.features'], array);
  },
  wgpuSupportedFeaturesFreeMembers__deps: ['$WGX'],
  wgpuSupportedFeaturesFreeMembers: function(features) {
    _free(WGX.u32(features + WGX.layout()['WGPUSupportedFeatures.features']));
  },
  wgpuAdapterRequestDevice__deps: ['$WGX'],
  wgpuAdapterRequestDevice: function(h, desc, callbackInfo) {
    var L = WGX.layout();
    var adapter = WGX.get(h);
    var info = WGX.callbackInfo(callbackInfo);
    var features = [];
    var count = WGX.u32(desc + L['WGPUDeviceDescriptor.requiredFeatureCount']);
    var list = WGX.u32(desc + L['WGPUDeviceDescriptor.requiredFeatures']);
    for (var i = 0; i < count; i++) {
      var name = WGX.featureNames[WGX.u32(list + 4 * i)];
      if (name) features.push(name);
    }
    var limitsPtr = WGX.u32(desc + L['WGPUDeviceDescriptor.requiredLimits']);
    var requiredLimits = limitsPtr ? WGX.limitsIn(limitsPtr, adapter.limits) : undefined;
    // A caller may ask for less than the adapter offers, as a smaller GPU would (wgx.js's
    // maxStorageBufferBindingSize): every size check above then sees that limit.
    var cap = Module['maxStorageBufferBindingSize'];
    if (cap && requiredLimits && requiredLimits.maxStorageBufferBindingSize > cap) {
      requiredLimits.maxStorageBufferBindingSize = cap;
    }
    var lost = WGX.callbackInfo(desc + L['WGPUDeviceDescriptor.deviceLostCallbackInfo']);
    var uncapturedAt = desc + L['WGPUDeviceDescriptor.uncapturedErrorCallbackInfo'];
    var uncaptured = {
      callback: WGX.u32(uncapturedAt + L['WGPUUncapturedErrorCallbackInfo.callback']),
      userdata1: WGX.u32(uncapturedAt + L['WGPUUncapturedErrorCallbackInfo.userdata1']),
      userdata2: WGX.u32(uncapturedAt + L['WGPUUncapturedErrorCallbackInfo.userdata2']),
    };
    var promise = adapter.requestDevice({
      label: WGX.label(desc, 'WGPUDeviceDescriptor.label'),
      requiredFeatures: features,
      requiredLimits: requiredLimits,
    }).then(function(device) {
      return function() {
        var dh = WGX.add(device);
        var d = {device: device, errors: [], scopes: [], uncaptured: uncaptured, lostCallback: lost,
                 lostInfo: null, lostDelivered: false};
        WGX.devices.set(dh, d);
        device.addEventListener('uncapturederror', function(event) {
          d.errors.push({type: WGX.errorType(event.error), message: event.error.message});
        });
        device.lost.then(function(l) {
          d.lostInfo = {reason: l.reason === 'destroyed' ? 2 : 1, message: l.message || ''};
        });
        WGX.reply(info, [1, dh], '');
      };
    }, function(e) {
      return function() {
        WGX.reply(info, [3, 0], WGX.text(e));
      };
    });
    return WGX.future(info, promise);
  },
  wgpuAdapterRelease__deps: ['$WGX'],
  wgpuAdapterRelease: function(h) { WGX.release(h); },

  // ---- Device ------------------------------------------------------------------------------
  wgpuDeviceGetLimits__deps: ['$WGX'],
  wgpuDeviceGetLimits: function(h, out) {
    WGX.limitsOut(WGX.get(h).limits, out);
    return 1;
  },
  wgpuDeviceHasFeature__deps: ['$WGX'],
  wgpuDeviceHasFeature: function(h, feature) {
    var name = WGX.featureNames[feature];
    return name && WGX.get(h).features.has(name) ? 1 : 0;
  },
  wgpuDeviceGetQueue__deps: ['$WGX'],
  wgpuDeviceGetQueue: function(h) { return WGX.add(WGX.get(h).queue); },
  wgpuDeviceCreateBuffer__deps: ['$WGX'],
  wgpuDeviceCreateBuffer: function(h, desc) {
    var L = WGX.layout();
    var buffer = WGX.guard(h, function() {
      return WGX.get(h).createBuffer({
        label: WGX.label(desc, 'WGPUBufferDescriptor.label'),
        usage: WGX.u64(desc + L['WGPUBufferDescriptor.usage']),
        size: WGX.u64(desc + L['WGPUBufferDescriptor.size']),
        mappedAtCreation: WGX.u32(desc + L['WGPUBufferDescriptor.mappedAtCreation']) !== 0,
      });
    });
    return buffer ? WGX.add({buffer: buffer, ranges: []}) : 0;
  },
  wgpuDeviceCreateShaderModule__deps: ['$WGX'],
  wgpuDeviceCreateShaderModule: function(h, desc) {
    var L = WGX.layout();
    var chain = WGX.u32(desc + L['WGPUShaderModuleDescriptor.nextInChain']);
    var code = chain ? WGX.str(chain + L['WGPUShaderSourceWGSL.code']) : '';
    var module = WGX.guard(h, function() {
      return WGX.get(h).createShaderModule({label: WGX.label(desc, 'WGPUShaderModuleDescriptor.label'), code: code});
    });
    return module ? WGX.add(module) : 0;
  },
  wgpuShaderModuleGetCompilationInfo__deps: ['$WGX'],
  wgpuShaderModuleGetCompilationInfo: function(h, callbackInfo) {
    var L = WGX.layout();
    var info = WGX.callbackInfo(callbackInfo);
    var promise = WGX.get(h).getCompilationInfo().then(function(result) {
      return function() {
        var messages = result.messages || [];
        var size = L['WGPUCompilationMessage'];
        var array = _malloc(Math.max(1, messages.length) * size);
        HEAPU8.fill(0, array, array + Math.max(1, messages.length) * size);
        var strings = [];
        messages.forEach(function(m, i) {
          var p = array + i * size;
          strings.push(WGX.setStr(p + L['WGPUCompilationMessage.message'], m.message));
          WGX.setU32(p + L['WGPUCompilationMessage.type'], m.type === 'error' ? 1 : m.type === 'warning' ? 2 : 3);
          WGX.setU64(p + L['WGPUCompilationMessage.lineNum'], m.lineNum || 0);
          WGX.setU64(p + L['WGPUCompilationMessage.linePos'], m.linePos || 0);
          WGX.setU64(p + L['WGPUCompilationMessage.offset'], m.offset || 0);
          WGX.setU64(p + L['WGPUCompilationMessage.length'], m.length || 0);
        });
        var ci = _malloc(L['WGPUCompilationInfo']);
        HEAPU8.fill(0, ci, ci + L['WGPUCompilationInfo']);
        WGX.setU32(ci + L['WGPUCompilationInfo.messageCount'], messages.length);
        WGX.setU32(ci + L['WGPUCompilationInfo.messages'], array);
        try {
          WGX.call(info.callback, 1, ci, info.userdata1, info.userdata2);
        } finally {
          strings.forEach(function(s) { _free(s); });
          _free(array);
          _free(ci);
        }
      };
    });
    return WGX.future(info, promise);
  },
  wgpuDeviceCreateBindGroupLayout__deps: ['$WGX'],
  wgpuDeviceCreateBindGroupLayout: function(h, desc) {
    var L = WGX.layout();
    var count = WGX.u32(desc + L['WGPUBindGroupLayoutDescriptor.entryCount']);
    var entries = WGX.u32(desc + L['WGPUBindGroupLayoutDescriptor.entries']);
    var types = [undefined, undefined, 'uniform', 'storage', 'read-only-storage'];
    var list = [];
    for (var i = 0; i < count; i++) {
      var e = entries + i * L['WGPUBindGroupLayoutEntry'];
      var b = e + L['WGPUBindGroupLayoutEntry.buffer'];
      list.push({
        binding: WGX.u32(e + L['WGPUBindGroupLayoutEntry.binding']),
        visibility: WGX.u64(e + L['WGPUBindGroupLayoutEntry.visibility']),
        buffer: {
          type: types[WGX.u32(b + L['WGPUBufferBindingLayout.type'])],
          hasDynamicOffset: WGX.u32(b + L['WGPUBufferBindingLayout.hasDynamicOffset']) !== 0,
          minBindingSize: WGX.u64(b + L['WGPUBufferBindingLayout.minBindingSize']),
        },
      });
    }
    var layout = WGX.guard(h, function() {
      return WGX.get(h).createBindGroupLayout({label: WGX.label(desc, 'WGPUBindGroupLayoutDescriptor.label'), entries: list});
    });
    return layout ? WGX.add(layout) : 0;
  },
  wgpuDeviceCreateBindGroup__deps: ['$WGX'],
  wgpuDeviceCreateBindGroup: function(h, desc) {
    var L = WGX.layout();
    var count = WGX.u32(desc + L['WGPUBindGroupDescriptor.entryCount']);
    var entries = WGX.u32(desc + L['WGPUBindGroupDescriptor.entries']);
    var list = [];
    for (var i = 0; i < count; i++) {
      var e = entries + i * L['WGPUBindGroupEntry'];
      var size = WGX.u64(e + L['WGPUBindGroupEntry.size']);
      list.push({
        binding: WGX.u32(e + L['WGPUBindGroupEntry.binding']),
        resource: {
          buffer: WGX.get(WGX.u32(e + L['WGPUBindGroupEntry.buffer'])).buffer,
          offset: WGX.u64(e + L['WGPUBindGroupEntry.offset']),
          size: size >= 18446744073709551615 ? undefined : size,
        },
      });
    }
    var group = WGX.guard(h, function() {
      return WGX.get(h).createBindGroup({
        label: WGX.label(desc, 'WGPUBindGroupDescriptor.label'),
        layout: WGX.get(WGX.u32(desc + L['WGPUBindGroupDescriptor.layout'])),
        entries: list,
      });
    });
    return group ? WGX.add(group) : 0;
  },
  wgpuDeviceCreatePipelineLayout__deps: ['$WGX'],
  wgpuDeviceCreatePipelineLayout: function(h, desc) {
    var L = WGX.layout();
    var count = WGX.u32(desc + L['WGPUPipelineLayoutDescriptor.bindGroupLayoutCount']);
    var layouts = WGX.u32(desc + L['WGPUPipelineLayoutDescriptor.bindGroupLayouts']);
    var list = [];
    for (var i = 0; i < count; i++) list.push(WGX.get(WGX.u32(layouts + 4 * i)));
    var layout = WGX.guard(h, function() {
      return WGX.get(h).createPipelineLayout({label: WGX.label(desc, 'WGPUPipelineLayoutDescriptor.label'), bindGroupLayouts: list});
    });
    return layout ? WGX.add(layout) : 0;
  },
  wgpuDeviceCreateComputePipeline__deps: ['$WGX'],
  wgpuDeviceCreateComputePipeline: function(h, desc) {
    var pipeline = WGX.guard(h, function() {
      return WGX.get(h).createComputePipeline(WGX.computePipelineDescriptor(desc));
    });
    return pipeline ? WGX.add(pipeline) : 0;
  },
  wgpuDeviceCreateComputePipelineAsync__deps: ['$WGX'],
  wgpuDeviceCreateComputePipelineAsync: function(h, desc, callbackInfo) {
    var info = WGX.callbackInfo(callbackInfo);
    // Status as webgpu.h numbers it: 1 success, 3 validation error, 4 internal error.
    var promise = WGX.get(h).createComputePipelineAsync(WGX.computePipelineDescriptor(desc)).then(function(p) {
      return function() { WGX.reply(info, [1, WGX.add(p)], ''); };
    }, function(e) {
      return function() { WGX.reply(info, [e && e.reason === 'validation' ? 3 : 4, 0], WGX.text(e)); };
    });
    return WGX.future(info, promise);
  },
  wgpuDeviceCreateCommandEncoder__deps: ['$WGX'],
  wgpuDeviceCreateCommandEncoder: function(h, desc) {
    return WGX.add(WGX.get(h).createCommandEncoder({label: WGX.label(desc, 'WGPUCommandEncoderDescriptor.label')}));
  },
  wgpuDeviceCreateQuerySet__deps: ['$WGX'],
  wgpuDeviceCreateQuerySet: function(h, desc) {
    var L = WGX.layout();
    var set = WGX.guard(h, function() {
      return WGX.get(h).createQuerySet({
        label: WGX.label(desc, 'WGPUQuerySetDescriptor.label'),
        type: WGX.u32(desc + L['WGPUQuerySetDescriptor.type']) === 2 ? 'timestamp' : 'occlusion',
        count: WGX.u32(desc + L['WGPUQuerySetDescriptor.count']),
      });
    });
    return set ? WGX.add(set) : 0;
  },
  wgpuDevicePushErrorScope__deps: ['$WGX'],
  wgpuDevicePushErrorScope: function(h, filter) {
    WGX.get(h).pushErrorScope([undefined, 'validation', 'out-of-memory', 'internal'][filter]);
    WGX.devices.get(h).scopes.push({synthetic: null});
  },
  wgpuDevicePopErrorScope__deps: ['$WGX'],
  wgpuDevicePopErrorScope: function(h, callbackInfo) {
    var info = WGX.callbackInfo(callbackInfo);
    var scope = WGX.devices.get(h).scopes.pop() || {synthetic: null};
    var promise = WGX.get(h).popErrorScope().then(function(error) {
      return function() {
        var type = scope.synthetic ? scope.synthetic.type : WGX.errorType(error);
        var message = scope.synthetic ? scope.synthetic.message : error ? error.message : '';
        WGX.reply(info, [1, type], message);
      };
    }, function(e) {
      return function() {
        WGX.reply(info, [3, 5], WGX.text(e));
      };
    });
    return WGX.future(info, promise);
  },
  wgpuDeviceDestroy__deps: ['$WGX'],
  wgpuDeviceDestroy: function(h) { WGX.get(h).destroy(); },
  wgpuDeviceRelease__deps: ['$WGX'],
  wgpuDeviceRelease: function(h) {
    WGX.devices.delete(h);
    WGX.release(h);
  },

  // ---- Buffers -----------------------------------------------------------------------------
  wgpuBufferMapAsync__deps: ['$WGX'],
  wgpuBufferMapAsync: function(h, mode, offset, size, callbackInfo) {
    var info = WGX.callbackInfo(callbackInfo);
    var b = WGX.get(h).buffer;
    var bytes = (size >>> 0) === 0xFFFFFFFF ? undefined : size >>> 0;
    var promise = b.mapAsync(Number(mode), offset >>> 0, bytes).then(function() {
      return function() { WGX.reply(info, [1], ''); };
    }, function(e) {
      return function() {
        var status = e && e.name === 'AbortError' ? 4 : 3;
        WGX.reply(info, [status], WGX.text(e));
      };
    });
    return WGX.future(info, promise);
  },
  $wgxMappedRange__deps: ['$WGX'],
  $wgxMappedRange: function(h, offset, size, writable) {
    var entry = WGX.get(h);
    var bytes = (size >>> 0) === 0xFFFFFFFF ? undefined : size >>> 0;
    var range = entry.buffer.getMappedRange(offset >>> 0, bytes);
    var n = range.byteLength;
    var ptr = _malloc(Math.max(n, 1));
    if (!writable) HEAPU8.set(new Uint8Array(range), ptr);
    entry.ranges.push({ptr: ptr, range: range, writable: writable});
    return ptr;
  },
  wgpuBufferGetConstMappedRange__deps: ['$wgxMappedRange'],
  wgpuBufferGetConstMappedRange: function(h, offset, size) { return wgxMappedRange(h, offset, size, false); },
  wgpuBufferGetMappedRange__deps: ['$wgxMappedRange'],
  wgpuBufferGetMappedRange: function(h, offset, size) { return wgxMappedRange(h, offset, size, true); },
  wgpuBufferUnmap__deps: ['$WGX'],
  wgpuBufferUnmap: function(h) {
    var entry = WGX.get(h);
    entry.ranges.forEach(function(r) {
      if (r.writable) new Uint8Array(r.range).set(HEAPU8.subarray(r.ptr, r.ptr + r.range.byteLength));
      _free(r.ptr);
    });
    entry.ranges = [];
    entry.buffer.unmap();
  },
  wgpuBufferGetSize__deps: ['$WGX'],
  wgpuBufferGetSize: function(h) { return BigInt(WGX.get(h).buffer.size); },
  wgpuBufferDestroy__deps: ['$WGX'],
  wgpuBufferDestroy: function(h) { WGX.get(h).buffer.destroy(); },
  wgpuBufferRelease__deps: ['$WGX'],
  wgpuBufferRelease: function(h) {
    var entry = WGX.get(h);
    if (entry) entry.ranges.forEach(function(r) { _free(r.ptr); });
    WGX.release(h);
  },

  wgpuShaderModuleRelease__deps: ['$WGX'],
  wgpuShaderModuleRelease: function(h) { WGX.release(h); },
  wgpuBindGroupLayoutRelease__deps: ['$WGX'],
  wgpuBindGroupLayoutRelease: function(h) { WGX.release(h); },
  wgpuBindGroupRelease__deps: ['$WGX'],
  wgpuBindGroupRelease: function(h) { WGX.release(h); },
  wgpuPipelineLayoutRelease__deps: ['$WGX'],
  wgpuPipelineLayoutRelease: function(h) { WGX.release(h); },
  wgpuComputePipelineRelease__deps: ['$WGX'],
  wgpuComputePipelineRelease: function(h) { WGX.release(h); },

  // ---- Commands ----------------------------------------------------------------------------
  wgpuCommandEncoderBeginComputePass__deps: ['$WGX'],
  wgpuCommandEncoderBeginComputePass: function(h, desc) {
    var L = WGX.layout();
    var d = {};
    if (desc) {
      d.label = WGX.str(desc + L['WGPUComputePassDescriptor.label']);
      var t = WGX.u32(desc + L['WGPUComputePassDescriptor.timestampWrites']);
      if (t) {
        var writes = {querySet: WGX.get(WGX.u32(t + L['WGPUPassTimestampWrites.querySet']))};
        var begin = WGX.u32(t + L['WGPUPassTimestampWrites.beginningOfPassWriteIndex']);
        var end = WGX.u32(t + L['WGPUPassTimestampWrites.endOfPassWriteIndex']);
        if (begin !== 0xFFFFFFFF) writes.beginningOfPassWriteIndex = begin;
        if (end !== 0xFFFFFFFF) writes.endOfPassWriteIndex = end;
        d.timestampWrites = writes;
      }
    }
    return WGX.add(WGX.get(h).beginComputePass(d));
  },
  wgpuCommandEncoderCopyBufferToBuffer__deps: ['$WGX'],
  wgpuCommandEncoderCopyBufferToBuffer: function(h, src, srcOffset, dst, dstOffset, size) {
    WGX.get(h).copyBufferToBuffer(WGX.get(src).buffer, Number(srcOffset), WGX.get(dst).buffer, Number(dstOffset), Number(size));
  },
  wgpuCommandEncoderClearBuffer__deps: ['$WGX'],
  wgpuCommandEncoderClearBuffer: function(h, buffer, offset, size) {
    WGX.get(h).clearBuffer(WGX.get(buffer).buffer, Number(offset), WGX.size64(size));
  },
  wgpuCommandEncoderResolveQuerySet__deps: ['$WGX'],
  wgpuCommandEncoderResolveQuerySet: function(h, set, first, count, dst, dstOffset) {
    WGX.get(h).resolveQuerySet(WGX.get(set), first, count, WGX.get(dst).buffer, Number(dstOffset));
  },
  wgpuCommandEncoderFinish__deps: ['$WGX'],
  wgpuCommandEncoderFinish: function(h, desc) {
    return WGX.add(WGX.get(h).finish({label: WGX.label(desc, 'WGPUCommandBufferDescriptor.label')}));
  },
  wgpuCommandEncoderRelease__deps: ['$WGX'],
  wgpuCommandEncoderRelease: function(h) { WGX.release(h); },
  wgpuCommandBufferRelease__deps: ['$WGX'],
  wgpuCommandBufferRelease: function(h) { WGX.release(h); },

  wgpuComputePassEncoderSetPipeline__deps: ['$WGX'],
  wgpuComputePassEncoderSetPipeline: function(h, pipeline) { WGX.objects[h].setPipeline(WGX.objects[pipeline]); },
  wgpuComputePassEncoderSetBindGroup__deps: ['$WGX'],
  wgpuComputePassEncoderSetBindGroup: function(h, index, group, count, offsets) {
    if (count) {
      WGX.objects[h].setBindGroup(index, WGX.objects[group], HEAPU32, offsets >> 2, count);
    } else {
      WGX.objects[h].setBindGroup(index, WGX.objects[group]);
    }
  },
  wgpuComputePassEncoderDispatchWorkgroups__deps: ['$WGX'],
  wgpuComputePassEncoderDispatchWorkgroups: function(h, x, y, z) { WGX.objects[h].dispatchWorkgroups(x, y, z); },
  wgpuComputePassEncoderEnd__deps: ['$WGX'],
  wgpuComputePassEncoderEnd: function(h) { WGX.objects[h].end(); },
  wgpuComputePassEncoderRelease__deps: ['$WGX'],
  wgpuComputePassEncoderRelease: function(h) { WGX.release(h); },

  // ---- Queue and query sets ----------------------------------------------------------------
  wgpuQueueWriteBuffer__deps: ['$WGX'],
  wgpuQueueWriteBuffer: function(h, buffer, offset, data, size) {
    WGX.objects[h].writeBuffer(WGX.objects[buffer].buffer, Number(offset), HEAPU8, data >>> 0, size >>> 0);
  },
  wgpuQueueSubmit__deps: ['$WGX'],
  wgpuQueueSubmit: function(h, count, commands) {
    var list = [];
    for (var i = 0; i < count; i++) list.push(WGX.objects[WGX.u32(commands + 4 * i)]);
    WGX.objects[h].submit(list);
  },
  wgpuQueueOnSubmittedWorkDone__deps: ['$WGX'],
  wgpuQueueOnSubmittedWorkDone: function(h, callbackInfo) {
    var info = WGX.callbackInfo(callbackInfo);
    var promise = WGX.get(h).onSubmittedWorkDone().then(function() {
      return function() { WGX.reply(info, [1], ''); };
    }, function(e) {
      return function() {
        WGX.reply(info, [3], WGX.text(e));
      };
    });
    return WGX.future(info, promise);
  },
  wgpuQueueRelease__deps: ['$WGX'],
  wgpuQueueRelease: function(h) { WGX.release(h); },
  wgpuQuerySetDestroy__deps: ['$WGX'],
  wgpuQuerySetDestroy: function(h) { WGX.get(h).destroy(); },
  wgpuQuerySetRelease__deps: ['$WGX'],
  wgpuQuerySetRelease: function(h) { WGX.release(h); },
});
