"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
require("reflect-metadata");
const typeorm_1 = require("typeorm");
const database_config_1 = require("./src/platform/config/database.config");
const app_module_1 = require("./src/app.module");
const data_source_options_1 = require("./src/platform/database/data-source-options");
exports.default = new typeorm_1.DataSource((0, data_source_options_1.buildDataSourceOptions)((0, database_config_1.loadDatabaseConfig)(), app_module_1.ENTITIES));
//# sourceMappingURL=ormconfig.js.map